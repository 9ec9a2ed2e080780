import type { Consumer, EachBatchPayload, KafkaMessage } from 'kafkajs';
import type { LogSink } from './kafka-config.ts';
import type { ProgressWatch } from './progress-watch.ts';
import { decodeRecord, type ConsumedRecord, type SubscribeOptions } from '@hub/core';

// One batch of a subscription (kafka-subscription.ts): where its partition's stored position says to
// start, the handler's call with the heartbeat kept up, and what its outcome does to the partition.

/** What a batch's handling shares with its subscription. */
export interface BatchLoop {
  readonly options: SubscribeOptions;
  readonly owned: ReadonlySet<string>;
  readonly timers: Set<NodeJS.Timeout>;
  readonly floors: StoredPositionFloors;
  /** FETCH_LINGER_MS (kafka-subscription.ts). */
  readonly lingerMs: number;
  /** When the last fetch came back. */
  fetchedAt(): number;
  /** The partition was handled up to the offset before nextOffset (committed at stop). */
  handled(topic: string, partition: number, nextOffset: string): void;
  /** Told when a partition's batch is being applied or waits out a backoff (progress-watch.ts). */
  readonly progress: ProgressWatch;
}

export interface StoredPositionFloors {
  readonly seekToStoredPositions: (c: Consumer, assignment: Record<string, number[]>) => void;
  /** The batch's messages at or after the partition's stored position (all of them, nearly always). */
  readonly fromStoredPosition: (topic: string, partition: number, messages: readonly KafkaMessage[]) => Promise<readonly KafkaMessage[]>;
}

export function storedPositionFloors(logger: LogSink, options: SubscribeOptions, owned: ReadonlySet<string>): StoredPositionFloors {
  // Where each owned partition's stored position says to start, once loaded: kafkajs starts fetching
  // from the group's committed offsets (or the beginning) as soon as it joined, before the seek below
  // can take effect; a batch fetched from there must not be handled (a first deploy of a consumer
  // whose position was set at the topic's end would otherwise replay its whole history).
  let floors: Promise<ReadonlyMap<string, bigint>> = Promise.resolve(new Map());
  const seekToStoredPositions = (c: Consumer, assignment: Record<string, number[]>): void => {
    const positions = options.positions;
    if (!positions) return;
    floors = (async () => {
      const loaded = new Map<string, bigint>();
      for (const [topic, partitions] of Object.entries(assignment)) {
        if (!owned.has(topic)) continue;
        const stored = await positions.load(topic);
        for (const partition of partitions) {
          const position = stored.get(partition);
          if (position === undefined) continue;
          c.seek({ topic, partition, offset: position.toString() });
          loaded.set(`${topic}:${partition}`, position);
        }
      }
      return loaded;
    })().catch((err: unknown) => {
      logger.warn('could not seek to the stored positions; resuming from Kafka offsets', { err, group: options.group });
      return new Map<string, bigint>();
    });
  };

  /** The batch's messages at or after the partition's stored position (all of them, nearly always). */
  const fromStoredPosition = async (topic: string, partition: number, messages: readonly KafkaMessage[]): Promise<readonly KafkaMessage[]> => {
    const floor = (await floors).get(`${topic}:${partition}`);
    const first = messages[0];
    if (floor === undefined || first === undefined || BigInt(first.offset) >= floor) return messages;
    return messages.filter((m) => BigInt(m.offset) >= floor);
  };
  return { seekToStoredPositions, fromStoredPosition };
}

export async function handleBatch(loop: BatchLoop, payload: EachBatchPayload): Promise<void> {
  const { options, owned, timers } = loop;
  const { batch } = payload;
  if (!owned.has(batch.topic) || batch.messages.length === 0 || !payload.isRunning() || payload.isStale()) return;
  // Fetched before the seek to the stored position took effect: what lies before it is not ours
  // to handle; the seek brings the partition there.
  const messages = await loop.floors.fromStoredPosition(batch.topic, batch.partition, batch.messages);
  if (messages.length === 0 || !payload.isRunning() || payload.isStale()) return;
  // A handler may take longer than the session timeout (a re-send of an eMSP's tokens, a wait
  // for Postgres): the member keeps heartbeating meanwhile, or the group would hand the partition
  // to another replica, which would apply the same batch while this one still does.
  const beat = setInterval(() => void payload.heartbeat().catch(() => undefined), 3_000);
  let outcome: Awaited<ReturnType<SubscribeOptions['onBatch']>>;
  loop.progress.handling(batch.topic, batch.partition, true);
  try {
    outcome = await options.onBatch({
      topic: batch.topic,
      partition: batch.partition,
      firstOffset: messages === batch.messages ? (batch.firstOffset() ?? '0') : (messages[0]?.offset ?? '0'),
      lastOffset: batch.lastOffset(),
      records: messages.map((m) => consumedRecord(batch.topic, batch.partition, m)),
    });
  } finally {
    clearInterval(beat);
    loop.progress.handling(batch.topic, batch.partition, false);
  }
  if (outcome) {
    // Not done: the partition waits where it is and is fetched again after the backoff.
    loop.progress.backingOff(batch.topic, batch.partition, Date.now() + outcome.retryAfterMs);
    const resume = payload.pause();
    const timer = setTimeout(() => {
      timers.delete(timer);
      resume();
    }, outcome.retryAfterMs);
    timers.add(timer);
    return;
  }
  payload.resolveOffset(batch.lastOffset());
  loop.handled(batch.topic, batch.partition, (BigInt(batch.lastOffset()) + 1n).toString());
  // Commits only once the interval has passed since the last commit (autoCommitInterval).
  await payload.commitOffsetsIfNecessary();
  const lag = BigInt(batch.offsetLag());
  options.onLag?.(batch.topic, batch.partition, Number(lag));
  await payload.heartbeat();
  // The batches of one fetch all wait for the same moment, so a fetch waits FETCH_LINGER_MS at most.
  const linger = loop.fetchedAt() + loop.lingerMs - Date.now();
  if (linger > 0 && lag <= 0n && payload.isRunning()) await new Promise((r) => setTimeout(r, linger));
}

export function consumedRecord(topic: string, partition: number, message: KafkaMessage): ConsumedRecord {
  const headers: Record<string, Buffer | string | undefined> = {};
  for (const [k, v] of Object.entries(message.headers ?? {})) {
    const first: unknown = Array.isArray(v) ? v[0] : v;
    headers[k] = Buffer.isBuffer(first) || typeof first === 'string' ? first : undefined;
  }
  const raw = { topic, partition, offset: message.offset, key: message.key ?? null, value: message.value, headers };
  return { ...raw, event: decodeRecord(raw) };
}
