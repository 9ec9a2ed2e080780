import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LiveObjectsChunk, ReadModel } from '@hub/core';
import { topics, type HubEvent } from '@hub/events';
import { fillSnapshot } from '../src/snapshot.ts';

// hubctl readmodel snapshot (docs/decisions/0014-snapshot-topics.md, Consequences): a token erased
// before the fill holds no personal data and no key to seal under, so it is left out; the objects of
// a model without drivers' tokens are written whatever their fields read.

async function fill(model: ReadModel, documents: ReadonlyArray<Record<string, string>>) {
  const appended: { topic: string; events: HubEvent[] }[] = [];
  const chunk: LiveObjectsChunk = {
    objects: documents.map((document, i) => ({ path: { countryCode: 'NL', partyId: 'EMP', id: `O${i}` }, document, createdAt: '2026-01-01T00:00:00.000Z' })),
    positions: new Map([[0, 5n]]),
  };
  const result = await fillSnapshot(
    {
      eventLog: { append: async (topic, events) => void appended.push({ topic, events: [...events] }) },
      store: { liveObjects: async (_model, _size, write) => (await write(chunk), chunk.objects.length) },
    },
    model,
  );
  return { result, appended };
}

describe('fillSnapshot', () => {
  it('leaves out the tokens whose uid reads as erased', async () => {
    const { result, appended } = await fill('tokens', [{ uid: 'ERASED', type: 'RFID' }, { uid: 'U1', type: 'RFID' }]);
    assert.equal(result.objects, 1);
    assert.equal(result.skipped, 1);
    assert.deepEqual(appended.map((a) => a.topic), [topics.tokensSnapshot]);
    assert.deepEqual(appended[0]?.events.map((e) => e.data), [{ uid: 'U1', type: 'RFID' }]);
  });

  it('writes every object of a model whose objects are not drivers\' tokens', async () => {
    const { result } = await fill('locations', [{ id: 'O0', uid: 'ERASED' }]);
    assert.equal(result.objects, 1);
    assert.equal(result.skipped, 0);
  });
});
