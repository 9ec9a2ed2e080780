import type { Consumer } from '@platformatic/kafka';
import type { PlatformaticAdmin } from './platformatic-admin.ts';
import { fetchPositions, type FetchLimitsMs } from './platformatic-fetch.ts';
import { platformaticRequestFailure } from './platformatic-failure.ts';
import { fetchLimits } from './fetch-limits.ts';
import { EPHEMERAL_FETCH_WAIT_MS } from './consume-timing.ts';
import type { ReadTopicsOptions, TopicRead, TopicRecord } from './topic-reader.ts';

// The topic reader (topic-reader.ts) over @platformatic/kafka: every partition read from its first
// offset with plain Fetch requests (platformatic-fetch.ts), so no one-off consumer group is made or
// left to delete.

const READ_FETCH: FetchLimitsMs = { ...fetchLimits(), maxWaitMs: EPHEMERAL_FETCH_WAIT_MS };

// Long because: one bounded read: the ends it reads to, the positions, the records and the deadline
// share the completion test.
export async function readTopicsPlatformatic(deps: { admin: PlatformaticAdmin; consumer: () => Consumer; physical: (topic: string) => string }, topics: readonly string[], options: ReadTopicsOptions): Promise<TopicRead> {
  const records: TopicRecord[] = [];
  const giveUpAt = Date.now() + options.timeoutMs;
  const until = options.until;
  /** The next offset to read of each partition, and (until 'end') the end to reach. */
  const next = new Map<string, { topic: string; partition: number; offset: bigint; end: bigint | undefined }>();
  try {
    for (const topic of topics.map(deps.physical)) {
      for (const o of await deps.admin.offsets(topic)) {
        const end = until === 'end' ? BigInt(o.high) : undefined;
        if (end === undefined || end > BigInt(o.low)) next.set(`${topic}:${o.partition}`, { topic, partition: o.partition, offset: BigInt(o.low), end });
      }
    }
  } catch (e) {
    throw platformaticRequestFailure(e);
  }
  const done = () => (until === 'end' ? next.size === 0 : until(records));
  if (done()) return { records, complete: true };
  const consumer = deps.consumer();
  try {
    while (Date.now() < giveUpAt) {
      const fetched = await fetchPositions(consumer, [...next.values()], { ...READ_FETCH, maxWaitMs: Math.min(READ_FETCH.maxWaitMs, Math.max(1, giveUpAt - Date.now())) });
      for (const f of fetched) {
        const k = `${f.topic}:${f.partition}`;
        const position = next.get(k);
        if (!position) continue;
        for (const r of f.records) {
          if (position.end !== undefined && BigInt(r.offset) >= position.end) break;
          records.push(r);
          if (until !== 'end' && until(records)) return { records, complete: true };
        }
        if (position.end !== undefined && f.next >= position.end) next.delete(k);
        else next.set(k, { ...position, offset: f.next });
      }
      if (until === 'end' && next.size === 0) return { records, complete: true };
    }
    return { records, complete: false };
  } catch (e) {
    throw platformaticRequestFailure(e);
  } finally {
    await consumer.close(true).catch(() => undefined);
  }
}
