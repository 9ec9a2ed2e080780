// How the Kafka adapter's subscriptions batch (platformatic-subscription.ts, platformatic-consume-loop.ts):
// - offsets are committed on an interval and when the subscription stops, no longer after every
//   batch. What a consumer without stored positions relies on: a member that stopped cleanly left the
//   group's offsets after everything it handled, so the next member of the group starts there;
// - after a small batch the next fetch waits for the linger, so records arriving at a moderate rate
//   are handled a batch at a time, not one by one.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { cdrEventTypes, newEvent, topics } from '@hub/events';
import type { ConsumedRecord, Subscription } from '@hub/core';
import { createTestStack, type TestStack } from '../src/stack.ts';

const topic = topics.cdrs;
const lingerTopic = topics.sessions;
const group = 'offset-commits';

function cdrEvent(id: string) {
  return newEvent({ type: cdrEventTypes.cdrPosted, source: 'test', subject: `NL/CPO/${id}`, key: `NL/CPO/${id}`, data: { id } });
}

async function until(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const giveUpAt = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > giveUpAt) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('Kafka subscriptions', () => {
  let stack: TestStack;
  before(async () => {
    stack = await createTestStack('offset_commits');
  });
  after(async () => {
    await stack.cleanup();
  });

  const subscribe = (seen: ConsumedRecord[]): Promise<Subscription> =>
    stack.eventLog.subscribe({
      group,
      topics: [topic],
      onBatch: async (batch) => {
        seen.push(...batch.records);
      },
    });

  it('hands records arriving one by one at a moderate rate over in batches, and the first of them at once', async () => {
    const lingerGroup = 'linger';
    const arrivals: number[] = [];
    const batches: number[] = [];
    // A topic of its own: the other test's group reads its topic from the beginning.
    let started = false;
    const subscription = await stack.eventLog.subscribe({
      group: lingerGroup,
      topics: [lingerTopic],
      onStarted: () => (started = true),
      onBatch: async (batch) => {
        batches.push(batch.records.length);
        for (const _ of batch.records) arrivals.push(Date.now());
      },
    });
    try {
      // The clock starts once the consumer runs and fetches (joining its group and its first fetch take
      // seconds on a loaded machine): one record handled first, then a quiet spell.
      await until(() => started, 'the subscription started');
      await stack.eventLog.append(lingerTopic, [{ ...cdrEvent('LINGER'), data: { id: 'LINGER-WARM-UP' } }]);
      await until(() => arrivals.length >= 1, 'the warm-up record handled');
      await new Promise((r) => setTimeout(r, 500));
      arrivals.length = 0;
      batches.length = 0;
      // One object's records (one partition), each appended once the one before is acknowledged: a
      // steady trickle of separate produce requests, a few milliseconds apart.
      const sentAt = Date.now();
      for (let n = 0; n < 60; n++) await stack.eventLog.append(lingerTopic, [{ ...cdrEvent('LINGER'), data: { id: `LINGER-${n}` } }]);
      await until(() => arrivals.length >= 60, 'all records handled');
      assert.ok((arrivals[0] ?? Infinity) - sentAt < 2_000, 'the first record after a quiet spell is handled without waiting for more');
      assert.ok(batches.length <= 30, `60 records in ${batches.length} batches (${batches.join(' ')}): the linger joined them`);
    } finally {
      await subscription.stop();
    }
  });

  it('commit their offsets while they run, once the commit interval has passed', async () => {
    const runningGroup = 'offset-interval';
    const runningTopic = topics.tokens;
    let handled = 0;
    const subscription = await stack.eventLog.subscribe({
      group: runningGroup,
      topics: [runningTopic],
      onBatch: async (batch) => {
        handled += batch.records.length;
      },
    });
    try {
      const committedSoFar = async (): Promise<bigint> => {
        const committed = await stack.eventLog.topicAdmin().committedOffsets(stack.eventLog.physicalGroup(runningGroup), [stack.eventLog.physical(runningTopic)]);
        return (committed[0]?.partitions ?? []).reduce((sum, p) => sum + (BigInt(p.offset) > 0n ? BigInt(p.offset) : 0n), 0n);
      };
      // A record every 250 ms for longer than OFFSET_COMMIT_INTERVAL_MS (5 s): batches keep coming.
      const until7s = Date.now() + 7_000;
      let n = 0;
      while (Date.now() < until7s) {
        await stack.eventLog.append(runningTopic, [cdrEvent(`RUNNING-${n++}`)]);
        await new Promise((r) => setTimeout(r, 250));
      }
      await until(() => handled === n, 'every record handled');
      assert.ok((await committedSoFar()) > 0n, 'a running member commits what it handled, without stopping');
    } finally {
      await subscription.stop();
    }
  });

  it('commit their offsets when they stop, so the next member of the group resumes after what was handled', async () => {
    const first: ConsumedRecord[] = [];
    const subscription = await subscribe(first);
    // Separate appends: several batches per partition, each of which used to be committed on its own.
    for (let n = 0; n < 12; n++) await stack.eventLog.append(topic, [cdrEvent(`CDR-${n}`)]);
    await until(() => first.length === 12, 'the first member to handle 12 records');
    await subscription.stop();

    const ends = await stack.eventLog.latestOffsets(topic);
    const committed = await stack.eventLog.topicAdmin().committedOffsets(stack.eventLog.physicalGroup(group), [stack.eventLog.physical(topic)]);
    const byPartition = new Map((committed[0]?.partitions ?? []).map((p) => [p.partition, BigInt(p.offset)]));
    for (const [partition, end] of ends) {
      if (end === 0n) continue;
      assert.equal(byPartition.get(partition), end, `partition ${partition}: the group's offset is after every handled record`);
    }

    const second: ConsumedRecord[] = [];
    const next = await subscribe(second);
    try {
      await stack.eventLog.append(topic, [cdrEvent('CDR-after')]);
      await until(() => second.length >= 1, 'the next member to handle the new record');
      await new Promise((r) => setTimeout(r, 500));
      assert.deepEqual(
        second.map((r) => (r.event?.data as { id?: string } | undefined)?.id),
        ['CDR-after'],
        'nothing handled before the stop is handled again',
      );
    } finally {
      await next.stop();
    }
  });
  it('hand over nothing before the stored positions, even what was fetched before the seek to them took effect', async () => {
    // A first deploy of a consumer whose positions were set at the topic's end (the dispatcher's
    // registry consumer): the group has no committed offsets, so a consumer could fetch from the beginning
    // as soon as it joined; the stored positions arrive later (here 1.5 s: a slow Postgres).
    const storedTopic = topics.tariffs;
    for (let n = 0; n < 30; n++) await stack.eventLog.append(storedTopic, [cdrEvent(`OLD-${n}`)]);
    const stored = await stack.eventLog.latestOffsets(storedTopic);
    const seen: ConsumedRecord[] = [];
    const subscription = await stack.eventLog.subscribe({
      group: 'stored-positions',
      topics: [storedTopic],
      positions: {
        load: async () => {
          await new Promise((r) => setTimeout(r, 1_500));
          return stored;
        },
      },
      onBatch: async (batch) => {
        seen.push(...batch.records);
      },
    });
    try {
      for (let n = 0; n < 5; n++) await stack.eventLog.append(storedTopic, [cdrEvent(`NEW-${n}`)]);
      await until(() => seen.length >= 5, 'the records after the stored positions');
      await new Promise((r) => setTimeout(r, 500));
      assert.deepEqual(seen.map((r) => (r.event?.data as { id?: string } | undefined)?.id).sort(), ['NEW-0', 'NEW-1', 'NEW-2', 'NEW-3', 'NEW-4']);
      assert.ok(seen.every((r) => BigInt(r.offset) >= (stored.get(r.partition) ?? 0n)), 'no record before its partition\'s stored position');
    } finally {
      await subscription.stop();
    }
  });
});
