import type { Consumer } from '@platformatic/kafka';
import { DependencyUnavailable, type WantedEvent } from '@hub/core';
import { boundedWith } from './group-commit.ts';
import { partitionOfKey } from './platformatic-appender.ts';
import type { PlatformaticAdmin } from './platformatic-admin.ts';
import { fetchPositions, type FetchLimitsMs } from './platformatic-fetch.ts';
import { platformaticRetriable, translatePlatformaticError } from './platformatic-failure.ts';
import { retrying } from './position-verify.ts';
import { fetchLimits } from './fetch-limits.ts';

/**
 * Record timestamps are the producer's clock (CreateTime), the `since` times Postgres's: the search
 * starts this much earlier so a skew between the hosts cannot hide a record.
 */
export const LOOKUP_MARGIN_MS = 60_000;

// EventLog.findEvents over @platformatic/kafka (docs/decisions/0003-each-cdr-once.md): each wanted
// event's partition (its key decides it, as the appender's partitioner does) is read from the offset of its earliest `since` (less LOOKUP_MARGIN_MS)
// to the end the partition had when the search began. The reads are plain Fetch requests from
// offsets the search chooses (platformatic-fetch.ts), so no consumer group is needed and no rejoin
// can move a read position: a partition not read to its end in time fails the search, never a false "absent".

const LOOKUP_FETCH: FetchLimitsMs = { ...fetchLimits(), maxWaitMs: 200 };

/**
 * The ids of the wanted events found in the physical topic, bounded by timeoutMs (DependencyUnavailable).
 * Long because: one bounded search: the offsets to read and the reads share the deadline and the found set.
 */
export async function findEventsPlatformatic(deps: { admin: PlatformaticAdmin; consumer: () => Consumer }, topic: string, wanted: readonly WantedEvent[], timeoutMs: number): Promise<Set<string>> {
  const found = new Set<string>();
  if (wanted.length === 0) return found;
  const giveUpAt = Date.now() + timeoutMs;
  const left = () => Math.max(1, giveUpAt - Date.now());
  const { ends, from, ids } = await boundedWith(translatePlatformaticError, `a search of ${topic}`, left(), (async () => {
    const offsets = await retrying(() => deps.admin.offsets(topic), platformaticRetriable, left(), 100);
    const ends = new Map(offsets.map((o) => [o.partition, BigInt(o.high)]));
    const earliest = new Map<number, number>();
    for (const w of wanted) {
      const p = partitionOfKey(w.key, ends.size);
      earliest.set(p, Math.min(earliest.get(p) ?? Infinity, w.since.getTime() - LOOKUP_MARGIN_MS));
    }
    const from = new Map<number, bigint>();
    for (const [p, time] of earliest) {
      const start = (await retrying(() => deps.admin.offsetsAt(topic, time), platformaticRetriable, left(), 100)).get(p) ?? -1n;
      if (start >= 0n && start < (ends.get(p) ?? 0n)) from.set(p, start);
    }
    return { ends, from, ids: new Set(wanted.map((w) => w.id)) };
  })());
  if (from.size === 0) return found;
  const consumer = deps.consumer();
  try {
    const next = new Map(from);
    while (next.size > 0) {
      if (Date.now() >= giveUpAt) throw new DependencyUnavailable('kafka', `Kafka did not serve ${topic} to its end within ${timeoutMs} ms`);
      const fetched = await boundedWith(translatePlatformaticError, `a search of ${topic}`, left(), fetchPositions(consumer, [...next].map(([partition, offset]) => ({ topic, partition, offset })), LOOKUP_FETCH));
      for (const f of fetched) {
        const end = ends.get(f.partition) ?? 0n;
        for (const r of f.records) {
          const id = r.headers['ce_id'];
          if (BigInt(r.offset) < end && id !== undefined && ids.has(id.toString())) found.add(id.toString());
        }
        if (f.next >= end) next.delete(f.partition);
        else next.set(f.partition, f.next);
      }
    }
    return found;
  } finally {
    await consumer.close(true).catch(() => undefined);
  }
}
