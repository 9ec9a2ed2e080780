// The event log's port on a real broker: a subscription starts at the stored positions, a batch whose
// handler asks for a backoff is delivered again from its first record (nothing skipped, nothing ahead
// of it), lag reaches 0 and the handled offsets are committed at stop; findEvents finds what is there and only that;
// readTopics reads every record back, a tombstone as a null value.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KafkaEventLog } from '@hub/event-log';
import type { RecordBatch } from '@hub/core';
import { newEvent, topics } from '@hub/events';
import { createTestStack, type TestStack } from '@hub/testing';

const event = (key: string, data: unknown) => newEvent({ type: 'test.v1', source: 'test', subject: key, key, data });

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const giveUpAt = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > giveUpAt) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('event log on a real broker', () => {
  let stack: TestStack;
  let log: KafkaEventLog;
  before(async () => {
    stack = await createTestStack('event_log_port');
    log = stack.eventLog;
  });
  after(async () => {
    await stack?.cleanup();
  });

  it('delivers a batch again after a backoff from its first record, reports lag and commits at stop', async () => {
    const key = 'NL/CPO/ONE';
    await log.append(topics.locations, [1, 2, 3, 4, 5].map((n) => event(key, { n })));
    const ends = await log.latestOffsets(topics.locations);
    const [partition, end] = [...ends].find(([, high]) => high > 0n) ?? assert.fail('no partition got the records');
    // The stored position skips the first record: it must never be delivered.
    const positions = { load: async () => new Map([[partition, end - 4n]]) };
    const batches: RecordBatch[] = [];
    const lags: number[] = [];
    const assigned: Array<Readonly<Record<string, readonly number[]>>> = [];
    let refused = false;
    const subscription = await log.subscribe({
      group: 'clients-probe',
      topics: [topics.locations],
      positions,
      onAssigned: (a) => assigned.push(a),
      onLag: (_t, _p, lag) => lags.push(lag),
      onBatch: async (batch) => {
        batches.push(batch);
        if (!refused) {
          refused = true;
          return { retryAfterMs: 300 };
        }
      },
    });
    try {
      await until('the batch handled after its backoff', () => batches.length >= 2 && lags.includes(0));
      const [first, second] = batches;
      assert.equal(first?.firstOffset, String(end - 4n));
      assert.equal(second?.records[0]?.offset, first?.records[0]?.offset, 'the refused batch comes again from its first record');
      const seen = batches.slice(1).flatMap((b) => b.records.map((r) => (r.event?.data as { n: number }).n));
      assert.deepEqual([...new Set(seen)], [2, 3, 4, 5]);
      assert.ok(assigned.some((a) => a[log.physical(topics.locations)]?.includes(partition)));
    } finally {
      await subscription.stop();
    }
    const admin = log.topicAdmin();
    try {
      const [committed] = await admin.committedOffsets(log.physicalGroup('clients-probe'), [log.physical(topics.locations)]);
      assert.equal(committed?.partitions.find((p) => p.partition === partition)?.offset, String(end));
    } finally {
      await admin.close();
    }
  });

  it('finds the events in a topic and only those', async () => {
    const since = new Date();
    const present = event('NL/CPO/CDR-1', { cdr: 1 });
    const absent = event('NL/CPO/CDR-2', { cdr: 2 });
    await log.append(topics.cdrs, [present]);
    const found = await log.findEvents(topics.cdrs, [
      { key: present.key, id: present.id, since },
      { key: absent.key, id: absent.id, since },
    ]);
    assert.deepEqual([...found], [present.id]);
  });

  it('reads a topic back to its end, a tombstone as a null value', async () => {
    await log.append(topics.locationsSnapshot, [event('NL/CPO/SNAP', { v: 1 }), event('NL/CPO/SNAP', null)]);
    const read = await log.readTopics([topics.locationsSnapshot], { until: 'end', timeoutMs: 20_000 });
    assert.ok(read.complete);
    assert.deepEqual(read.records.map((r) => r.value?.toString() ?? null), ['{"v":1}', null]);
    assert.ok(read.records.every((r) => r.timestamp > Date.now() - 60_000));
    assert.equal(await log.reachable(), true);
    assert.match((await log.brokerSetting('min.insync.replicas')) ?? '', /^\d+$/);
  });
});
