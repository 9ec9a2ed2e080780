import { eventHeaders, recordValue, type HubEvent } from '@hub/events';
import { DependencyUnavailable } from '@hub/core';
import type { EventLogOptions } from './kafka-config.ts';

// The group commit of the event log's appends (platformatic-appender.ts): one produce request at a time (the idempotent producer keeps
// one in flight) carries every append queued meanwhile, so throughput grows with concurrency instead
// of queueing behind one round trip per request. Each append is bounded by appendTimeoutMs.

/** Kafka did not acknowledge an append in time: a DependencyUnavailable, so callers answer "retry later". */
export class AppendTimeoutError extends DependencyUnavailable {
  constructor(topic: string, ms: number) {
    super('kafka', `Kafka did not acknowledge the append to ${topic} within ${ms} ms`);
    this.name = 'AppendTimeoutError';
  }
}

/** How long an append waits for its acknowledgement unless APPEND_TIMEOUT_MS says otherwise. */
export const DEFAULT_APPEND_TIMEOUT_MS = 10_000;

/**
 * Bounds a Kafka call that has no deadline of its own (a client retries connects and metadata
 * requests for tens of seconds while a broker restarts): after ms it fails with DependencyUnavailable;
 * a failure of the call itself goes through `translate` (the client's failure translation).
 */
export function boundedWith<T>(translate: (e: unknown) => unknown, what: string, ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new DependencyUnavailable('kafka', `Kafka did not answer ${what} within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).then(
    (v) => (clearTimeout(timer), v),
    (e: unknown) => {
      clearTimeout(timer);
      throw translate(e);
    },
  );
}

/** One record to produce, as both clients take it. A null value is a tombstone. */
export interface OutgoingRecord {
  readonly key: string;
  readonly value: string | null;
  readonly headers: Record<string, string>;
}

/** The records of one produce request, by physical topic. */
export type TopicRecords = ReadonlyArray<{ readonly topic: string; readonly messages: readonly OutgoingRecord[] }>;

/** What the group commit asks of a client's producer. */
export interface ProducerSlot {
  /** The current producer's send (acks=all), connecting one first when there is none. */
  connect(): Promise<(records: TopicRecords) => Promise<unknown>>;
  /** Replaces the current producer after a failed or timed-out send; the old one is closed at once. */
  discard(): void;
  close(): Promise<void>;
}

export interface KafkaAppender {
  append(topic: string, events: readonly HubEvent[]): Promise<void>;
  close(): Promise<void>;
}

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

function topicRecords(batch: readonly PendingAppend[]): TopicRecords {
  const byTopic = new Map<string, OutgoingRecord[]>();
  for (const entry of batch) {
    const messages = byTopic.get(entry.topic) ?? [];
    // A null value is a tombstone: log compaction removes the key (snapshot topics, docs/decisions/0014-snapshot-topics.md).
    for (const e of entry.events) messages.push({ key: e.key, value: recordValue(e), headers: eventHeaders(e) });
    byTopic.set(entry.topic, messages);
  }
  return [...byTopic].map(([topic, messages]) => ({ topic, messages }));
}

// Long because: the queue, the one send in flight and the linger timer share the pending appends;
// each closure is short.
export function groupCommitAppender(options: EventLogOptions, physical: (topic: string) => string, slot: ProducerSlot, translate: (e: unknown) => unknown): KafkaAppender {
  const timeoutMs = options.appendTimeoutMs ?? DEFAULT_APPEND_TIMEOUT_MS;
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
    let live = batch;
    try {
      const send = await slot.connect();
      // An append that timed out while the producer connected was answered "retry later": it is not
      // sent, or the partner's retry of it would be a second record.
      live = batch.filter((entry) => !entry.settled);
      if (live.length === 0) return;
      // Bounded like each append: a request held by a lost broker (a client retries it for tens of
      // seconds) would otherwise hold up every later append; the discarded producer's close ends it.
      const sent = send(topicRecords(live));
      sent.catch(() => undefined);
      await boundedWith(translate, 'a produce request', timeoutMs, sent);
      for (const entry of live) settle(entry);
    } catch (e) {
      slot.discard();
      const failure = translate(e);
      for (const entry of live) settle(entry, failure);
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
        const entry: PendingAppend = { topic: physical(topic), logicalTopic: topic, events, resolve, reject, startedAt: performance.now(), settled: false };
        entry.timer = setTimeout(() => settle(entry, new AppendTimeoutError(topic, timeoutMs)), timeoutMs);
        pending.push(entry);
        scheduleFlush();
      });
    },
    close: () => slot.close(),
  };
}

/**
 * Retiring producers: an old producer is closed at once, which ends the client's retries of its
 * request in flight (platformatic-appender.ts); `settled` bounds the wait for the closes at close.
 */
export function producerRetirement(): { retire(close: () => Promise<void>): void; settled(ms: number, translate: (e: unknown) => unknown): Promise<unknown> } {
  const retiring = new Set<Promise<void>>();
  return {
    retire(close) {
      const retired = close().catch(() => undefined);
      retiring.add(retired);
      void retired.finally(() => retiring.delete(retired));
    },
    settled: (ms, translate) => boundedWith(translate, 'the retired producers', ms, Promise.allSettled([...retiring])),
  };
}
