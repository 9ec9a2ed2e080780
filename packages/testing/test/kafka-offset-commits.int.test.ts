// The Kafka adapter commits a consumer group's offsets on an interval and when the subscription stops
// (kafka-subscription.ts, OFFSET_COMMIT_INTERVAL_MS), no longer after every batch. What a consumer
// without stored positions relies on: a member that stopped cleanly left the group's offsets after
// everything it handled, so the next member of the group starts there, not over again.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { cdrEventTypes, newEvent, topics } from '@hub/events';
import type { ConsumedRecord, Subscription } from '@hub/event-log';
import { createTestStack, type TestStack } from '../src/stack.ts';

const topic = topics.cdrs;
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

describe('consumer offsets in Kafka', () => {
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

  it('are committed when a subscription stops, so the next member of the group resumes after what was handled', async () => {
    const first: ConsumedRecord[] = [];
    const subscription = await subscribe(first);
    // Separate appends: several batches per partition, each of which used to be committed on its own.
    for (let n = 0; n < 12; n++) await stack.eventLog.append(topic, [cdrEvent(`CDR-${n}`)]);
    await until(() => first.length === 12, 'the first member to handle 12 records');
    await subscription.stop();

    const ends = await stack.eventLog.latestOffsets(topic);
    const committed = await stack.eventLog.admin().fetchOffsets({ groupId: stack.eventLog.physicalGroup(group), topics: [stack.eventLog.physical(topic)] });
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
});
