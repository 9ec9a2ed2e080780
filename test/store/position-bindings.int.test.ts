// The binding of a consumer group's positions to a topic (migrations 015 and 031), as the event log's
// position check reads and writes it: cluster id, partitions, starts and ends, and Kafka's topic id
// when one was read (a binding from before it has none, and gets one when bound again).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { postgresPositionBindings } from '@hub/store';
import { givenTestStack } from '@hub/testing';

describe('position bindings on Postgres', () => {
  const given = givenTestStack('position_bindings');

  it('keeps the topic id with the offsets, and a binding without one stays without', async () => {
    const bindings = postgresPositionBindings(given.stack.pool);
    const offsets = { clusterId: 'cluster-A', partitions: 2, starts: new Map([[0, 0n], [1, 4n]]), ends: new Map([[0, 12n], [1, 9n]]) };
    assert.equal(await bindings.load('projector', 'ocpi.locations.v1'), undefined);
    await bindings.save('projector', 'ocpi.locations.v1', offsets);
    const before = await bindings.load('projector', 'ocpi.locations.v1');
    assert.deepEqual(before, offsets, 'no topic id read: none stored');
    await bindings.save('projector', 'ocpi.locations.v1', { ...offsets, topicId: '5f0c1a52-9f3e-4c61-8b7e-2f1d3c4b5a69' });
    const after = await bindings.load('projector', 'ocpi.locations.v1');
    assert.equal(after?.topicId, '5f0c1a52-9f3e-4c61-8b7e-2f1d3c4b5a69');
    assert.deepEqual(after?.ends, offsets.ends);
    assert.equal(await bindings.load('dispatcher', 'ocpi.locations.v1'), undefined, 'per consumer group');
  });
});
