// The event log's subscribe checks stored positions against the topic on a real broker:
// positions bound to this topic pass and are bound; after the topic is deleted and created
// again they are refused (beyond the end, the end below the one seen), and so are positions bound to
// another cluster id. A refusing subscription delivers nothing and starts by itself once the
// positions are bound anew.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { topicIdReader } from '@hub/event-log';
import type { RecordBatch, StoredPositions, TopicBinding } from '@hub/core';
import { newEvent } from '@hub/events';
import { createTestStack, type TestStack } from '@hub/testing';

const TOPIC = 'probe.positions.v1';
const REFILLED = 'probe.refilled.v1';

function memoryPositions(initial: Map<number, bigint>) {
  const state = { positions: initial, binding: undefined as TopicBinding | undefined };
  const port: StoredPositions = {
    load: () => Promise.resolve(state.positions),
    loadBinding: () => Promise.resolve(state.binding),
    saveBinding: (_topic, binding) => {
      state.binding = binding;
      return Promise.resolve();
    },
  };
  return { state, port };
}

describe('event log: stored positions bound to the cluster and the topic', () => {
  let stack: TestStack;
  /** Creates the topic, waiting while a deletion of the same name is still under way. */
  const createTopic = async () => {
    const admin = stack.eventLog.topicAdmin();
    try {
      for (let i = 0; ; i++) {
        const created = await admin.createTopics([{ name: stack.eventLog.physical(TOPIC), partitions: 1, replicationFactor: 1 }], { waitForLeaders: false }).catch(() => false);
        if (created) return;
        if (i > 100) throw new Error('the topic could not be created');
        await new Promise((r) => setTimeout(r, 200));
      }
    } finally {
      await admin.close();
    }
  };
  const append = async (n: number) => {
    for (let i = 0; ; i++) {
      try {
        return await stack.eventLog.append(TOPIC, Array.from({ length: n }, (_, k) => newEvent({ type: 'test.v1', source: 'test', subject: `NL/STK/${k}`, key: 'K', data: { k } })));
      } catch (e) {
        if (i > 50) throw e;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  };
  before(async () => {
    stack = await createTestStack('positions_bound');
    await createTopic();
  });
  after(async () => {
    await stack?.cleanup();
  });

  it('binds matching positions, refuses them once the topic is recreated or for another cluster id', async () => {
    await append(3);
    const { state, port } = memoryPositions(new Map([[0, 3n]]));
    assert.deepEqual(await stack.eventLog.verifyPositions([TOPIC], port), []);
    assert.equal(state.binding?.partitions, 1);
    assert.equal(state.binding?.ends.get(0), 3n);
    const clusterId = state.binding?.clusterId ?? '';
    assert.ok(clusterId.length > 0);

    // The topic deleted and created again, with fewer records than the positions know of.
    const admin = stack.eventLog.topicAdmin();
    await admin.deleteTopics([stack.eventLog.physical(TOPIC)]);
    await admin.close();
    await createTopic();
    // Deletion is asynchronous: until the broker serves the new topic, its offsets may still be the
    // old one's (a fresh-clone run once read an end of 3 here and found nothing to refuse), and a
    // record appended meanwhile may land in the old topic and vanish with it (another run never saw
    // the new topic's record). So: wait for the new topic's empty end, append, and append again if
    // the record went to the old topic.
    const endOf = async () => (await stack.eventLog.latestOffsets(TOPIC).catch(() => new Map<number, bigint>())).get(0);
    const waitForEnd = async (end: bigint, tries: number) => {
      for (let i = 0; i < tries; i++) {
        if ((await endOf()) === end) return true;
        await new Promise((r) => setTimeout(r, 100));
      }
      return false;
    };
    if (!(await waitForEnd(0n, 600))) throw new Error('the recreated topic never showed an empty end');
    for (let attempt = 0; ; attempt++) {
      await append(1);
      if (await waitForEnd(1n, 50)) break;
      if (attempt > 5 || (await endOf()) !== 0n) throw new Error(`the recreated topic never showed its one record (end ${await endOf()})`);
    }
    const [recreated] = await stack.eventLog.verifyPositions([TOPIC], port);
    assert.match(recreated?.reason ?? '', /partition 0 ends at 1, below the 3 seen before: the topic was recreated/);
    assert.match(recreated?.reason ?? '', /the position 3 of partition 0 is beyond its end 1/);
    assert.equal(state.binding?.ends.get(0), 3n, 'a refused binding is left as it was');

    // Even without positions the recreated topic is recognised by the binding.
    state.positions = new Map();
    assert.equal((await stack.eventLog.verifyPositions([TOPIC], port)).length, 1);

    const bound = state.binding;
    assert.ok(bound);
    state.binding = { ...bound, clusterId: 'another-cluster' };
    const [other] = await stack.eventLog.verifyPositions([TOPIC], port);
    assert.match(other?.reason ?? '', new RegExp(`taken from Kafka cluster another-cluster, the brokers are cluster ${clusterId}`));
  });

  it('a refusing subscription delivers nothing, and starts by itself once the positions are bound anew', async () => {
    const { state, port } = memoryPositions(new Map([[0, 50n]]));
    const batches: RecordBatch[] = [];
    const mismatches: string[] = [];
    const subscription = await stack.eventLog.subscribe({
      group: 'positions-probe',
      topics: [TOPIC],
      positions: port,
      recheckMs: 200,
      ephemeral: true,
      onMismatch: (found) => mismatches.push(...found.map((m) => m.reason)),
      onBatch: async (batch) => void batches.push(batch),
    });
    try {
      assert.equal(subscription.mismatches().length, 1);
      // Producers go on appending while the consumer refuses: the reason's end offset changes, the
      // refusal does not, and it is not reported again.
      await append(1);
      await new Promise((r) => setTimeout(r, 1_000));
      assert.deepEqual(batches, []);
      assert.equal(mismatches.length, 1, 'reported once, not at every recheck');

      // The fix: positions from the current topic (its start), bound to it.
      state.positions = new Map([[0, 0n]]);
      assert.deepEqual(await stack.eventLog.verifyPositions([TOPIC], port, { rebind: true }), []);
      for (let i = 0; batches.length === 0; i++) {
        if (i > 150) assert.fail('the subscription did not start after the positions were bound');
        await new Promise((r) => setTimeout(r, 200));
      }
      assert.deepEqual(subscription.mismatches(), []);
      const first = (batches as RecordBatch[])[0];
      assert.equal(first?.records[0]?.offset, '0');
      assert.deepEqual(first?.records[0]?.event?.data, { k: 0 });
    } finally {
      await subscription.stop();
    }
  });

  // A topic recreated while nothing ran and refilled past the old end keeps every offset check
  // happy (the ends went forward, the start is 0); its topic id (Metadata v10 and later) differs, and the
  // binding holds the id it saw (position-check.ts).
  it('a topic recreated and refilled past the old end is refused by its topic id', async () => {
    const physical = stack.eventLog.physical(REFILLED);
    const admin = stack.eventLog.topicAdmin();
    // The adapter's own topic-id reader (topic-ids.ts): an empty map when the ids cannot be read.
    const topicIds = topicIdReader({ brokers: stack.brokers, clientId: 'positions-test' }, { error() {}, warn() {}, info() {}, debug() {} });
    // Created (again): an attempt that failed on a loaded broker (a timeout) may still have created
    // it, so a topic there with an id other than `notId` (the deleted one's) counts too.
    const create = async (notId?: string) => {
      for (let i = 0; ; i++) {
        if (await admin.createTopics([{ name: physical, partitions: 1, replicationFactor: 1 }]).catch(() => false)) return;
        const id = (await topicIds([physical])).get(physical);
        if (id !== undefined && id !== notId) return;
        if (i > 100) throw new Error('the topic could not be created');
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const fill = async (n: number) => {
      for (let i = 0; ; i++) {
        try {
          return await stack.eventLog.append(REFILLED, Array.from({ length: n }, (_, k) => newEvent({ type: 'test.v1', source: 'test', subject: `NL/STK/${k}`, key: 'K', data: { k } })));
        } catch (e) {
          if (i > 50) throw e;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    };
    try {
      await create();
      await fill(3);
      const before = (await topicIds([physical])).get(physical);
      assert.match(before ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'a topic id');
      const { state, port } = memoryPositions(new Map([[0, 3n]]));
      assert.deepEqual(await stack.eventLog.verifyPositions([REFILLED], port), []);
      assert.equal(state.binding?.topicId, before, 'the binding holds the topic id');

      await admin.deleteTopics([physical]);
      await create(before);
      // As above: the new topic's empty end first, then the records, again if they went to the old one.
      const endOf = async () => (await stack.eventLog.latestOffsets(REFILLED).catch(() => new Map<number, bigint>())).get(0);
      for (let tries = 0; (await endOf()) !== 0n; tries++) {
        if (tries > 600) throw new Error('the recreated topic never showed an empty end');
        await new Promise((r) => setTimeout(r, 100));
      }
      for (let attempt = 0; (await endOf()) !== 5n; attempt++) {
        if (attempt > 5) throw new Error(`the recreated topic never showed its five records (end ${await endOf()})`);
        if ((await endOf()) === 0n) await fill(5);
        for (let tries = 0; tries < 50 && (await endOf()) !== 5n; tries++) await new Promise((r) => setTimeout(r, 100));
      }
      const [refused] = await stack.eventLog.verifyPositions([REFILLED], port);
      assert.match(refused?.reason ?? '', new RegExp(`its topic id was ${before} and is now [0-9a-f-]{36}: the topic was deleted and created again`));
      assert.equal(state.binding?.topicId, before, 'a refused binding is left as it was');
      const after = (await topicIds([physical])).get(physical);
      assert.match(after ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      assert.notEqual(after, before, 'the recreated topic has another id');
    } finally {
      await admin.close();
    }
  });
});
