import { Kafka, Partitioners, logLevel, type Admin, type KafkaConfig, type SASLOptions, type Consumer, type KafkaMessage, type Producer } from 'kafkajs';
import protocolErrors from 'kafkajs/src/protocol/error.js';
import { eventFromRecord, eventHeaders, topicName, type HubEvent } from '@hub/events';
import { DependencyUnavailable } from '@hub/ocpi';

// The only module that imports the Kafka client (reference design, Layout). Everything else sees the
// EventLog port: append events durably, consume them in a consumer group.

export interface LogSink {
  error(message: string, meta?: object): void;
  warn(message: string, meta?: object): void;
  info(message: string, meta?: object): void;
  debug(message: string, meta?: object): void;
}

/** TLS towards the brokers: PEM CA, client certificate and key, server name (config KafkaTls). */
export interface KafkaTlsOptions {
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly servername?: string;
}

/** SASL login (config KafkaSasl); the password is never logged. */
export interface KafkaSaslOptions {
  readonly mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512';
  readonly username: string;
  readonly password: string;
}

export interface EventLogOptions {
  readonly brokers: readonly string[];
  readonly clientId: string;
  readonly ssl?: KafkaTlsOptions;
  readonly sasl?: KafkaSaslOptions;
  readonly topicPrefix?: string;
  readonly logger: LogSink;
  /** An append not acknowledged within this time fails (the caller answers "retry later"). */
  readonly appendTimeoutMs?: number;
  /**
   * How long an append that finds the producer idle waits for others to join its produce request
   * (Kafka's linger.ms). 0 sends at once; appends arriving during a send always share the next one.
   */
  readonly lingerMs?: number;
  /**
   * Called once per append when it settles: acknowledged ('ok') or failed or timed out ('error'),
   * with the logical topic and the number of events (metrics: hub_event_appends_total).
   */
  readonly onAppendSettled?: (topic: string, outcome: 'ok' | 'error', events: number) => void;
}

/** Kafka did not acknowledge an append in time: a DependencyUnavailable, so callers answer "retry later". */
export class AppendTimeoutError extends DependencyUnavailable {
  constructor(topic: string, ms: number) {
    super('kafka', `Kafka did not acknowledge the append to ${topic} within ${ms} ms`);
    this.name = 'AppendTimeoutError';
  }
}

/** Kafka client errors as DependencyUnavailable (kafkajs names its errors KafkaJS...); others unchanged. */
function asUnavailable(err: unknown): unknown {
  if (err instanceof DependencyUnavailable) return err;
  const name = (err as { name?: unknown } | null | undefined)?.name;
  if (typeof name !== 'string' || !name.startsWith('KafkaJS')) return err;
  return new DependencyUnavailable('kafka', `Kafka unavailable: ${(err as Error).message}`, { cause: err });
}

/**
 * Bounds a Kafka call that has no deadline of its own (kafkajs retries connects and metadata requests
 * for tens of seconds while a broker restarts): after ms it fails with DependencyUnavailable.
 */
function bounded<T>(what: string, ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new DependencyUnavailable('kafka', `Kafka did not answer ${what} within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).then(
    (v) => (clearTimeout(timer), v),
    (e: unknown) => {
      clearTimeout(timer);
      throw asUnavailable(e);
    },
  );
}

export interface ConsumedEvent {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly event: HubEvent;
}

export interface EventLog {
  /**
   * Appends events to a topic with acks=all; resolves once every in-sync replica has them. Appends
   * made while a send is in flight travel together in the next produce request (group commit).
   */
  append(topic: string, events: readonly HubEvent[]): Promise<void>;
  /** The next offset of every partition of a topic (its high watermark). */
  latestOffsets(topic: string): Promise<Map<number, bigint>>;
  /** A consumer-group member over logical topic names. */
  consumer(groupId: string, options?: { maxBytesPerPartition?: number }): Consumer;
  admin(): Admin;
  /** Physical name of a logical topic (prefix applied). */
  physical(topic: string): string;
  /** Physical name of a consumer group (prefix applied). */
  physicalGroup(groupId: string): string;
  /** Parses a consumed record; undefined for a record that is not one of our events. */
  decode(topic: string, partition: number, message: KafkaMessage): ConsumedEvent | undefined;
  close(): Promise<void>;
}

const kafkaLevels: Record<number, keyof LogSink> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
  [logLevel.NOTHING]: 'debug',
};

/**
 * Kafka's retriable protocol errors ("The coordinator is loading", "The group coordinator is not
 * available", a leader moving): the client retries them itself, and they are routine while a broker
 * starts or a group forms. kafkajs logs every such response at ERROR; here they are debug lines. What
 * outlasts the retries still surfaces: connection errors, exhausted retries and consumer crashes are
 * other log lines, and the call fails.
 */
const retriableProtocolErrors = new Set(protocolErrors.errorCodes.filter((e) => e.retriable).map((e) => e.message));

export function kafkaLogLevel(level: number, namespace: string, log: { message: string; error?: unknown }): keyof LogSink {
  if (namespace === 'Connection' && log.message.startsWith('Response ') && typeof log.error === 'string' && retriableProtocolErrors.has(log.error)) return 'debug';
  return kafkaLevels[level] ?? 'info';
}

function saslOptions(s: KafkaSaslOptions): SASLOptions {
  const login = { username: s.username, password: s.password };
  // kafkajs types SASL as one object per mechanism.
  switch (s.mechanism) {
    case 'plain': return { mechanism: 'plain', ...login };
    case 'scram-sha-256': return { mechanism: 'scram-sha-256', ...login };
    case 'scram-sha-512': return { mechanism: 'scram-sha-512', ...login };
  }
}

/** kafkajs's connection settings for a (possibly secured) cluster. */
export function kafkaConnection(options: Pick<EventLogOptions, 'brokers' | 'clientId' | 'ssl' | 'sasl'>): Pick<KafkaConfig, 'clientId' | 'brokers' | 'ssl' | 'sasl'> {
  const { ssl, sasl } = options;
  return {
    clientId: options.clientId,
    brokers: [...options.brokers],
    // rejectUnauthorized stays true: a broker whose certificate does not chain to the CA is refused.
    ...(ssl ? { ssl: { rejectUnauthorized: true, ...ssl } } : {}),
    ...(sasl ? { sasl: saslOptions(sasl) } : {}),
  };
}

export function createKafkaEventLog(options: EventLogOptions): EventLog {
  const prefix = options.topicPrefix ?? '';
  const kafka = new Kafka({
    ...kafkaConnection(options),
    logLevel: logLevel.WARN,
    retry: { retries: 8, initialRetryTime: 200, maxRetryTime: 5000 },
    logCreator: () => (entry) => {
      const { message, ...meta } = entry.log;
      options.logger[kafkaLogLevel(entry.level, entry.namespace, entry.log)](`kafka: ${message}`, { ...meta, namespace: entry.namespace });
    },
  });
  let producer: Producer | undefined;
  let connecting: Promise<Producer> | undefined;
  const open: Array<{ disconnect(): Promise<void> }> = [];

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

  const physical = (topic: string): string => topicName(prefix, topic);

  // Group commit: one produce request at a time (the idempotent producer keeps one in flight) carries
  // every append queued meanwhile, so throughput grows with concurrency instead of queueing behind
  // one round trip per request.
  interface PendingAppend {
    readonly topic: string;
    readonly logicalTopic: string;
    readonly events: readonly HubEvent[];
    readonly resolve: () => void;
    readonly reject: (e: unknown) => void;
    timer?: NodeJS.Timeout;
    settled: boolean;
  }
  let pending: PendingAppend[] = [];
  let sending = false;
  const settle = (entry: PendingAppend, error?: unknown) => {
    if (entry.settled) return;
    entry.settled = true;
    clearTimeout(entry.timer);
    options.onAppendSettled?.(entry.logicalTopic, error === undefined ? 'ok' : 'error', entry.events.length);
    if (error === undefined) entry.resolve();
    else entry.reject(error);
  };
  const flush = async (): Promise<void> => {
    if (sending) return;
    const batch = pending.filter((p) => !p.settled);
    pending = [];
    if (batch.length === 0) return;
    sending = true;
    try {
      const p = await getProducer();
      const byTopic = new Map<string, Array<{ key: string; value: string; headers: Record<string, string> }>>();
      for (const entry of batch) {
        const messages = byTopic.get(entry.topic) ?? [];
        for (const e of entry.events) messages.push({ key: e.key, value: JSON.stringify(e.data), headers: eventHeaders(e) });
        byTopic.set(entry.topic, messages);
      }
      await p.sendBatch({ acks: -1, topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
      for (const entry of batch) settle(entry);
    } catch (e) {
      const failure = asUnavailable(e);
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
  let adminClient: Promise<Admin> | undefined;
  const sharedAdmin = (): Promise<Admin> => {
    adminClient ??= (async () => {
      const a = kafka.admin();
      open.push(a);
      await a.connect();
      return a;
    })().catch((e: unknown) => {
      adminClient = undefined;
      throw e;
    });
    return adminClient;
  };

  const physicalGroup = (groupId: string): string => topicName(prefix, groupId);
  return {
    physical,
    physicalGroup,
    append(topic, events) {
      if (events.length === 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timeoutMs = options.appendTimeoutMs ?? 10_000;
        const entry: PendingAppend = { topic: physical(topic), logicalTopic: topic, events, resolve, reject, settled: false };
        entry.timer = setTimeout(() => settle(entry, new AppendTimeoutError(topic, timeoutMs)), timeoutMs);
        pending.push(entry);
        scheduleFlush();
      });
    },
    async latestOffsets(topic) {
      // Bounded like an append: a push that waits for the projection before appending (a PATCH, a
      // child PUT) answers "retry later" within appendTimeoutMs while Kafka is away (issue 10, item 3).
      // A leader that just moved or a topic just created answers NOT_LEADER / UNKNOWN_TOPIC (retriable):
      // asked again within the same bound, as kafkajs does for produce and fetch.
      const limitMs = options.appendTimeoutMs ?? 10_000;
      const giveUpAt = Date.now() + limitMs;
      const fetchOffsets = async () => {
        for (;;) {
          try {
            return await (await sharedAdmin()).fetchTopicOffsets(physical(topic));
          } catch (e) {
            if ((e as { retriable?: unknown }).retriable !== true || Date.now() >= giveUpAt) throw e;
            await new Promise((r) => setTimeout(r, 100));
          }
        }
      };
      const offsets = await bounded(`the offsets of ${topic}`, limitMs, fetchOffsets());
      return new Map(offsets.map((o) => [o.partition, BigInt(o.high)]));
    },
    consumer(groupId, consumerOptions = {}) {
      // A member that died without leaving (SIGKILL) holds its partitions until its session times
      // out: 10 s keeps that pause short while tolerating ordinary GC and I/O stalls.
      const c = kafka.consumer({
        groupId: physicalGroup(groupId),
        allowAutoTopicCreation: false,
        sessionTimeout: 10_000,
        heartbeatInterval: 1_000,
        ...(consumerOptions.maxBytesPerPartition ? { maxBytesPerPartition: consumerOptions.maxBytesPerPartition, maxBytes: consumerOptions.maxBytesPerPartition * 4 } : {}),
      });
      open.push(c);
      return c;
    },
    admin() {
      const a = kafka.admin();
      open.push(a);
      return a;
    },
    decode(topic, partition, message) {
      const headers: Record<string, string | undefined> = {};
      for (const [k, v] of Object.entries(message.headers ?? {})) {
        headers[k] = Array.isArray(v) ? v[0]?.toString() : v?.toString();
      }
      const event = eventFromRecord(message.key?.toString() ?? '', headers, message.value?.toString() ?? '');
      return event ? { topic, partition, offset: message.offset, event } : undefined;
    },
    async close() {
      await Promise.allSettled([producer?.disconnect(), ...open.map((c) => c.disconnect())]);
    },
  };
}

/** Appends a mixed batch in its order: consecutive events for one topic go in one request. */
export async function appendInOrder(log: EventLog, batch: ReadonlyArray<{ topic: string; event: HubEvent }>): Promise<void> {
  let i = 0;
  while (i < batch.length) {
    const topic = batch[i]?.topic ?? '';
    const run: HubEvent[] = [];
    while (i < batch.length && batch[i]?.topic === topic) run.push((batch[i++] as { event: HubEvent }).event);
    await log.append(topic, run);
  }
}
