import type { Kafka, Producer } from 'kafkajs';
import { Partitioners } from 'kafkajs';
import { eventHeaders, type HubEvent } from '@hub/events';
import { DependencyUnavailable } from '@hub/core';
import type { EventLogOptions } from './kafka-config.ts';
import { translateKafkaError } from './kafka-failure.ts';

// The append half of the Kafka event log (kafka-event-log.ts): durable appends (acks=all, idempotent
// producer) gathered into group commits, each bounded in time.

/** Kafka did not acknowledge an append in time: a DependencyUnavailable, so callers answer "retry later". */
export class AppendTimeoutError extends DependencyUnavailable {
  constructor(topic: string, ms: number) {
    super('kafka', `Kafka did not acknowledge the append to ${topic} within ${ms} ms`);
    this.name = 'AppendTimeoutError';
  }
}

/**
 * Bounds a Kafka call that has no deadline of its own (kafkajs retries connects and metadata requests
 * for tens of seconds while a broker restarts): after ms it fails with DependencyUnavailable.
 */
export function bounded<T>(what: string, ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new DependencyUnavailable('kafka', `Kafka did not answer ${what} within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).then(
    (v) => (clearTimeout(timer), v),
    (e: unknown) => {
      clearTimeout(timer);
      throw translateKafkaError(e);
    },
  );
}

/** How long an append waits for its acknowledgement unless APPEND_TIMEOUT_MS says otherwise. */
export const DEFAULT_APPEND_TIMEOUT_MS = 10_000;

export interface KafkaAppender {
  append(topic: string, events: readonly HubEvent[]): Promise<void>;
  close(): Promise<void>;
}

// Long because: one producer's lifecycle (connect, replace after a failed send, retire) and the
// group-commit queue that feeds it share the producer and the pending appends; each closure is short.
export function createKafkaAppender(kafka: Kafka, options: EventLogOptions, physical: (topic: string) => string): KafkaAppender {
  let producer: Producer | undefined;
  let connecting: Promise<Producer> | undefined;

  const getProducer = (): Promise<Producer> => {
    if (producer) return Promise.resolve(producer);
    connecting ??= (async () => {
      // Idempotent producer: a retried send (e.g. while a fresh partition's leader settles) cannot
      // write a record twice. One request in flight keeps the sequence numbers in order; retries are
      // unbounded inside kafkajs and bounded by appendTimeoutMs here instead.
      const p = kafka.producer({
        createPartitioner: Partitioners.DefaultPartitioner,
        allowAutoTopicCreation: false,
        idempotent: true,
        maxInFlightRequests: 1,
      });
      await p.connect();
      producer = p;
      return p;
    })().catch((e: unknown) => {
      connecting = undefined;
      throw e;
    });
    return connecting;
  };

  // kafkajs takes a failed produce request's sequence numbers back, also for partitions the broker
  // wrote (another partition's error in the same response, a request that timed out while the broker
  // waited for its replicas). The next batch would reuse them and the broker would answer "duplicate"
  // for new records it never writes: acknowledged and lost (test/cluster/broker-loss.cluster.test.ts).
  // After a failed or timed-out send the producer is replaced: a new producer id starts afresh. The old
  // one is disconnected once its request in flight has settled (disconnecting under it leaves kafkajs
  // retrying a request nobody waits for); close() waits for that, bounded.
  const retiring = new Set<Promise<void>>();
  const discardProducer = (inFlight: Promise<unknown> | undefined): void => {
    const old = producer;
    producer = undefined;
    connecting = undefined;
    if (!old) return;
    const retired = (inFlight ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => old.disconnect())
      .catch(() => undefined);
    retiring.add(retired);
    void retired.finally(() => retiring.delete(retired));
  };

  // Group commit: one produce request at a time (the idempotent producer keeps one in flight) carries
  // every append queued meanwhile, so throughput grows with concurrency instead of queueing behind
  // one round trip per request.
  interface PendingAppend {
    readonly topic: string;
    readonly logicalTopic: string;
    readonly events: readonly HubEvent[];
    readonly resolve: () => void;
    readonly reject: (e: unknown) => void;
    /** performance.now() when append was called. */
    readonly startedAt: number;
    timer?: NodeJS.Timeout;
    settled: boolean;
  }
  let pending: PendingAppend[] = [];
  let sending = false;
  const settle = (entry: PendingAppend, error?: unknown) => {
    if (entry.settled) return;
    entry.settled = true;
    clearTimeout(entry.timer);
    options.onAppendSettled?.(entry.logicalTopic, error === undefined ? 'ok' : 'error', entry.events.length, (performance.now() - entry.startedAt) / 1000);
    if (error === undefined) entry.resolve();
    else entry.reject(error);
  };
  const flush = async (): Promise<void> => {
    if (sending) return;
    const batch = pending.filter((p) => !p.settled);
    pending = [];
    if (batch.length === 0) return;
    sending = true;
    let sent: Promise<unknown> | undefined;
    try {
      const p = await getProducer();
      const byTopic = new Map<string, Array<{ key: string; value: string | null; headers: Record<string, string> }>>();
      for (const entry of batch) {
        const messages = byTopic.get(entry.topic) ?? [];
        // A null value is a tombstone: log compaction removes the key (snapshot topics, docs/decisions/0014-snapshot-topics.md).
        for (const e of entry.events) messages.push({ key: e.key, value: e.data === null ? null : JSON.stringify(e.data), headers: eventHeaders(e) });
        byTopic.set(entry.topic, messages);
      }
      // Bounded like each append: a request held by a lost broker (kafkajs retries it for tens of
      // seconds) would otherwise hold up every later append; it is left to the discarded producer.
      sent = p.sendBatch({ acks: -1, topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
      sent.catch(() => undefined);
      await bounded('a produce request', options.appendTimeoutMs ?? DEFAULT_APPEND_TIMEOUT_MS, sent);
      for (const entry of batch) settle(entry);
    } catch (e) {
      discardProducer(sent);
      const failure = translateKafkaError(e);
      for (const entry of batch) settle(entry, failure);
    } finally {
      sending = false;
      if (pending.length > 0) scheduleFlush();
    }
  };
  let lingering = false;
  const scheduleFlush = (): void => {
    const linger = options.lingerMs ?? 0;
    if (linger <= 0) return void flush();
    if (lingering || sending) return;
    lingering = true;
    setTimeout(() => {
      lingering = false;
      void flush();
    }, linger);
  };
  return {
    append(topic, events) {
      if (events.length === 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timeoutMs = options.appendTimeoutMs ?? DEFAULT_APPEND_TIMEOUT_MS;
        const entry: PendingAppend = { topic: physical(topic), logicalTopic: topic, events, resolve, reject, startedAt: performance.now(), settled: false };
        entry.timer = setTimeout(() => settle(entry, new AppendTimeoutError(topic, timeoutMs)), timeoutMs);
        pending.push(entry);
        scheduleFlush();
      });
    },
    async close() {
      await Promise.allSettled([producer?.disconnect(), bounded('the retired producers', options.appendTimeoutMs ?? DEFAULT_APPEND_TIMEOUT_MS, Promise.allSettled([...retiring]))]);
    },
  };
}
