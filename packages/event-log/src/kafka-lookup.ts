import { randomUUID } from 'node:crypto';
import { Partitioners, type Admin, type Batch, type Consumer, type PartitionMetadata } from 'kafkajs';
import { DependencyUnavailable } from '@hub/core';
import type { WantedEvent } from '@hub/core';
import { bounded } from './kafka-appender.ts';

// Whether events are in a topic already (docs/decisions/0003-each-cdr-once.md): before a CDR whose
// append may have landed is appended again, its own partition (its key decides it, as the appender's
// partitioner does) is read from the offset of the time it was received to the end.


/**
 * Record timestamps are the producer's clock (CreateTime), the `since` times Postgres's: the search
 * starts this much earlier so a skew between the hosts cannot hide a record.
 */
export const LOOKUP_MARGIN_MS = 60_000;

const partitionOf = (() => {
  const partitioner = Partitioners.DefaultPartitioner();
  return (topic: string, partitions: number, key: string): number =>
    partitioner({
      topic,
      partitionMetadata: Array.from({ length: partitions }, (_, i): PartitionMetadata => ({ partitionId: i, leader: 0, replicas: [], isr: [], offlineReplicas: [], partitionErrorCode: 0 })),
      message: { key, value: null },
    });
})();

/**
 * The offset a batch was fetched from: kafkajs keeps it on the batch (`fetchedOffset`, not in its
 * typings); without it, the batch's first record (a gap in the topic then reads as a skip, and the
 * search is tried again until it gives up: never a false "absent").
 */
function fetchedFrom(batch: Batch): bigint {
  const fetched = (batch as unknown as { fetchedOffset?: unknown }).fetchedOffset;
  if (typeof fetched === 'string' || typeof fetched === 'number') return BigInt(fetched);
  return BigInt(batch.firstOffset() ?? batch.lastOffset());
}

/**
 * The ids of the wanted events found in the physical topic. Reads each wanted partition from the offset
 * for its earliest `since` (less LOOKUP_MARGIN_MS) up to its high watermark as it was when the search
 * began, with a consumer group of its own (never committed). Bounded by timeoutMs (DependencyUnavailable).
 * Long because: one bounded search: the offsets to read (admin) and the scan that reads them (a
 * consumer of its own) share the deadline, the wanted set and the found set.
 */
export async function findEventsInTopic(
  deps: { admin: () => Promise<Admin>; consumer: (groupId: string) => Consumer },
  topic: string,
  wanted: readonly WantedEvent[],
  timeoutMs: number,
): Promise<Set<string>> {
  const found = new Set<string>();
  if (wanted.length === 0) return found;
  const giveUpAt = Date.now() + timeoutMs;
  const admin = await bounded(`a search of ${topic}`, timeoutMs, deps.admin());
  // A leader that just moved or a topic just created answers NOT_LEADER (retriable): asked again
  // within the bound, as latestOffsets does (kafka-event-log.ts).
  const retrying = async <T>(ask: () => Promise<T>): Promise<T> => {
    for (;;) {
      try {
        return await ask();
      } catch (e) {
        if ((e as { retriable?: unknown }).retriable !== true || Date.now() >= giveUpAt) throw e;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  const { ends, from, ids } = await bounded(`a search of ${topic}`, Math.max(1, giveUpAt - Date.now()), (async () => {
    const ends = new Map((await retrying(() => admin.fetchTopicOffsets(topic))).map((o) => [o.partition, BigInt(o.high)]));
    const earliest = new Map<number, number>();
    const ids = new Set<string>();
    for (const w of wanted) {
      const p = partitionOf(topic, ends.size, w.key);
      earliest.set(p, Math.min(earliest.get(p) ?? Infinity, w.since.getTime() - LOOKUP_MARGIN_MS));
      ids.add(w.id);
    }
    const from = new Map<number, bigint>();
    for (const [p, time] of earliest) {
      const [at] = (await retrying(() => admin.fetchTopicOffsetsByTimestamp(topic, time))).filter((o) => o.partition === p);
      const start = BigInt(at?.offset ?? '-1');
      // -1: no record at or after the time, nothing to read in this partition.
      if (start >= 0n && start < (ends.get(p) ?? 0n)) from.set(p, start);
    }
    return { ends, from, ids };
  })());
  if (from.size === 0) return found;
  const consumer = deps.consumer(`cdr-lookup-${randomUUID()}`);
  let timer: NodeJS.Timeout | undefined;
  try {
    const remaining = new Set(from.keys());
    // The first offset of each partition not searched yet. The group has no committed offsets, so a
    // consumer that rejoins it (its coordinator moved while the cluster recovers) starts again at the
    // end of the partition: a batch fetched from beyond this offset skipped part of the range, and
    // taking it for the end of the search would call a present CDR absent and append it twice.
    const next = new Map(from);
    let done: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => (done = resolve));
    timer = setTimeout(done, Math.max(1, giveUpAt - Date.now()));
    await bounded(`a search of ${topic}`, Math.max(1, giveUpAt - Date.now()), (async () => {
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: false });
    })());
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const at = next.get(batch.partition);
        if (at === undefined || !remaining.has(batch.partition)) return;
        if (fetchedFrom(batch) > at) {
          consumer.seek({ topic, partition: batch.partition, offset: at.toString() });
          return;
        }
        const end = ends.get(batch.partition) ?? 0n;
        for (const m of batch.messages) {
          const offset = BigInt(m.offset);
          if (offset < at) continue;
          if (offset >= end) break;
          const id = m.headers?.['ce_id'];
          if (id !== undefined && ids.has(String(id))) found.add(String(id));
        }
        const after = BigInt(batch.lastOffset()) + 1n;
        if (after > at) next.set(batch.partition, after);
        if (after >= end) {
          remaining.delete(batch.partition);
          if (remaining.size === 0) done();
        }
      },
    });
    for (const [partition, offset] of from) consumer.seek({ topic, partition, offset: offset.toString() });
    await finished;
    if (remaining.size > 0) throw new DependencyUnavailable('kafka', `Kafka did not serve ${topic} to its end within ${timeoutMs} ms`);
    return found;
  } finally {
    clearTimeout(timer);
    await consumer.disconnect().catch(() => undefined);
  }
}
