import { randomUUID } from 'node:crypto';
import type { Consumer } from 'kafkajs';
import { kafkaRequestFailure } from './kafka-failure.ts';
import { consumedRecord } from './kafka-batch.ts';
import type { ReadTopicsOptions, TopicRead, TopicRecord } from './topic-reader.ts';
import type { PartitionOffsets } from './topics-admin.ts';

// The Kafka adapter of the topic reader (topic-reader.ts): a kafkajs consumer in a one-off group,
// subscribed from the beginning, stopped when the read is complete or timed out; the group is deleted.

export interface TopicReaderDeps {
  /** A consumer of the (logical) group, its empty fetches short so that a stop is quick. */
  readonly consumer: (group: string) => Consumer;
  readonly physical: (topic: string) => string;
  readonly physicalGroup: (group: string) => string;
  /** First and next offset of every partition of a physical topic. */
  readonly offsets: (physicalTopic: string) => Promise<PartitionOffsets[]>;
  readonly deleteGroup: (physicalGroup: string) => Promise<void>;
}

// Long because: one bounded read: the ends it reads to, the consumer, the records and the deadline
// share the completion test.
export async function readKafkaTopics(deps: TopicReaderDeps, topics: readonly string[], options: ReadTopicsOptions): Promise<TopicRead> {
  const physicalTopics = topics.map(deps.physical);
  const records: TopicRecord[] = [];
  /** 'end': the next offset to reach of every partition not read to its end yet, by "topic:partition". */
  const remaining = new Map<string, bigint>();
  const until = options.until;
  if (until === 'end') {
    for (const topic of physicalTopics) {
      const offsets = await deps.offsets(topic).catch((e: unknown) => {
        throw kafkaRequestFailure(e);
      });
      for (const o of offsets) if (BigInt(o.high) > BigInt(o.low)) remaining.set(`${topic}:${o.partition}`, BigInt(o.high));
    }
  }
  const done = () => (until === 'end' ? remaining.size === 0 : until(records));
  if (done()) return { records, complete: true };

  const group = `reader-${randomUUID()}`;
  const consumer = deps.consumer(group);
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  let complete = false;
  const timer = setTimeout(finish, options.timeoutMs);
  try {
    await consumer.connect();
    for (const topic of physicalTopics) await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ topic, partition, message }) => {
        if (complete) return;
        const offset = BigInt(message.offset);
        if (until === 'end') {
          const end = remaining.get(`${topic}:${partition}`);
          if (end === undefined || offset >= end) return;
          if (offset + 1n >= end) remaining.delete(`${topic}:${partition}`);
        }
        records.push({ ...consumedRecord(topic, partition, message), timestamp: Number(message.timestamp) });
        if (done()) {
          complete = true;
          finish();
        }
      },
    });
    await finished;
    return { records, complete };
  } catch (e) {
    throw kafkaRequestFailure(e);
  } finally {
    clearTimeout(timer);
    await consumer.disconnect().catch(() => undefined);
    // A one-off group served once: leave no stale group behind.
    await deps.deleteGroup(deps.physicalGroup(group)).catch(() => undefined);
  }
}
