import type { Consumer } from '@platformatic/kafka';
import { decodeRecord, type ConsumedRecord } from '@hub/core';

// Fetching partitions from given offsets with @platformatic/kafka's Fetch call (Consumer.fetch), the
// building block of the @platformatic/kafka subscription, event lookup and topic reader. Its
// MessagesStream delivers records one by one with one pause for the whole stream; the port wants one
// partition's records as a batch, a partition paused alone for a backoff and fetched again from where
// it stood (BatchOutcome): with Fetch requests of its own the adapter decides every fetch offset, so
// no record is skipped and none handled before its predecessors.

/** Where to fetch a partition from. */
export interface FetchPosition {
  readonly topic: string;
  readonly partition: number;
  readonly offset: bigint;
}

/** A consumed record with the producer's timestamp (CreateTime, ms). */
export interface FetchedRecord extends ConsumedRecord {
  readonly timestamp: number;
}

/** What one fetch brought of one partition. */
export interface FetchedPartition extends FetchPosition {
  /** The records at or after `offset`, in offset order (control records left out). */
  readonly records: readonly FetchedRecord[];
  /** Where to fetch next: past the last record batch returned (compaction and control batches leave gaps), else `offset`. */
  readonly next: bigint;
  readonly highWatermark: bigint;
}

export interface FetchLimitsMs {
  readonly maxBytes: number;
  readonly maxBytesPerPartition: number;
  /** How long a fetch that finds nothing waits at the broker. */
  readonly maxWaitMs: number;
}

/** Kafka's record batch attribute of a control batch (transaction markers), never a record of the hub. */
const IS_CONTROL = 1 << 5;

/**
 * Fetches each position once, from each partition's leader (one request per broker, side by side).
 * A failure of any request fails the whole call: the caller fetches the same positions again.
 */
export async function fetchPositions(consumer: Consumer, positions: readonly FetchPosition[], limits: FetchLimitsMs): Promise<FetchedPartition[]> {
  if (positions.length === 0) return [];
  const topics = [...new Set(positions.map((p) => p.topic))];
  // The client asks metadata for the topics it tracks (a group member tracks its subscription already).
  for (const topic of topics) if (!consumer.topics.current.includes(topic)) consumer.topics.track(topic);
  const metadata = await consumer.metadata({ topics });
  const byNode = new Map<number, FetchPosition[]>();
  const names = new Map<string, string>();
  for (const position of positions) {
    const topic = metadata.topics.get(position.topic);
    const leader = topic?.partitions[position.partition]?.leader;
    if (topic === undefined || leader === undefined || leader < 0) continue; // no leader now: asked again next time
    names.set(topic.id, position.topic);
    byNode.set(leader, [...(byNode.get(leader) ?? []), position]);
  }
  const responses = await Promise.all(
    [...byNode].map(async ([node, wanted]) => {
      const ids = new Map(wanted.map((w) => [w.topic, metadata.topics.get(w.topic)?.id ?? '']));
      const response = await consumer.fetch({
        node,
        maxBytes: limits.maxBytes,
        maxWaitTime: limits.maxWaitMs,
        minBytes: 1,
        topics: [...new Set(wanted.map((w) => w.topic))].map((topic) => ({
          topicId: ids.get(topic) ?? '',
          partitions: wanted.filter((w) => w.topic === topic).map((w) => ({ partition: w.partition, fetchOffset: w.offset, partitionMaxBytes: limits.maxBytesPerPartition, currentLeaderEpoch: -1, lastFetchedEpoch: -1 })),
        })),
      });
      return { wanted, response };
    }),
  );
  const fetched: FetchedPartition[] = [];
  for (const { wanted, response } of responses) {
    for (const topicResponse of response.responses) {
      const topic = names.get(topicResponse.topicId) ?? topicResponse.topicId;
      for (const p of topicResponse.partitions) {
        // A fetch session may return partitions not asked for this time: only the wanted ones count.
        const position = wanted.find((w) => w.topic === topic && w.partition === p.partitionIndex);
        if (position) fetched.push(partitionRecords(position, p.records ?? [], p.highWatermark));
      }
    }
  }
  return fetched;
}

type RecordBatches = NonNullable<Awaited<ReturnType<Consumer['fetch']>>['responses'][number]['partitions'][number]['records']>;

function partitionRecords(position: FetchPosition, batches: RecordBatches, highWatermark: bigint): FetchedPartition {
  const records: FetchedRecord[] = [];
  let next = position.offset;
  for (const batch of batches) {
    const end = batch.firstOffset + BigInt(batch.lastOffsetDelta) + 1n;
    if (end > next) next = end;
    if (batch.attributes & IS_CONTROL) continue;
    for (const r of batch.records) {
      const offset = batch.firstOffset + BigInt(r.offsetDelta);
      // A fetch starts at the record batch holding the offset asked: the records before it are not ours.
      if (offset < position.offset) continue;
      const headers: Record<string, Buffer | string | undefined> = {};
      for (const [k, v] of r.headers) if (k !== null) headers[k.toString()] = v ?? undefined;
      const raw = { topic: position.topic, partition: position.partition, offset: offset.toString(), key: r.key, value: r.value, headers };
      records.push({ ...raw, event: decodeRecord(raw), timestamp: Number(batch.firstTimestamp + r.timestampDelta) });
    }
  }
  return { ...position, records, next, highWatermark };
}
