import { eventFromRecord, type HubEvent } from '@hub/events';

// The EventLog port (reference design, Layout): appending events durably and consuming them in a
// consumer group. A consumer declares what it reads and where it stands; the adapter
// (packages/event-log, platformatic-subscription.ts) owns the driver: group membership, seeking to
// the positions the caller stores, heartbeats, commits, pausing a partition for a backoff, lag. The
// callers (projector, dispatcher, hubctl rebuild and replay) see only these types.

/** A Kafka record as consumed, byte-exact: what the quarantine keeps (migration 013). */
export interface RawRecord {
  /** The topic as the cluster names it (prefix applied). */
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, Buffer | string | undefined>>;
}

/** One consumed record, byte-exact, with the hub event it carries. */
export interface ConsumedRecord extends RawRecord {
  /** The hub event (CloudEvents binary mode); undefined for a record that is not one. */
  readonly event: HubEvent | undefined;
}

/** Records of one partition, in offset order, as one fetch brought them. */
export interface RecordBatch {
  readonly topic: string;
  readonly partition: number;
  readonly firstOffset: string;
  readonly lastOffset: string;
  readonly records: readonly ConsumedRecord[];
}

/**
 * What a handler answers for a batch: nothing when it is done (the position moves past it), or the
 * time to wait before the same batch is fetched again (the partition pauses; nothing is skipped).
 */
export type BatchOutcome = void | { readonly retryAfterMs: number };

/** Why a consumer must not start: its stored positions do not belong to the topics it would read. */
export interface PositionsMismatch {
  readonly topic: string;
  readonly reason: string;
}

/**
 * Identity of the topic partition positions were taken from (migrations 015 and 031): what the event
 * log checks stored positions against (position-check.ts) and the store keeps (PositionBindingStore).
 */
export interface TopicBinding {
  readonly clusterId: string;
  readonly partitions: number;
  /** Highest end and start offset seen per partition: a topic's offsets never go backwards. */
  readonly ends: ReadonlyMap<number, bigint>;
  readonly starts: ReadonlyMap<number, bigint>;
  /** Kafka's topic id (KIP-516) of the topic the positions were taken from, when the brokers name one. */
  readonly topicId?: string | undefined;
}

/**
 * Where a consumer stands, kept by the caller in its own store (Postgres: the position moves in the
 * same transaction as what it applied). `load` gives the next offset per partition of a topic.
 */
export interface StoredPositions {
  load(topic: string): Promise<ReadonlyMap<number, bigint>>;
  /** The identity the positions are bound to; both absent: positions are not checked. */
  loadBinding?(topic: string): Promise<TopicBinding | undefined>;
  saveBinding?(topic: string, binding: TopicBinding): Promise<void>;
}

export interface SubscribeOptions {
  /** Consumer group (logical; the prefix is applied). */
  readonly group: string;
  /** Logical topic names. */
  readonly topics: readonly string[];
  /** Stored positions to start from on every assignment; absent: Kafka's committed offsets, else the beginning. */
  readonly positions?: StoredPositions;
  readonly onBatch: (batch: RecordBatch) => Promise<BatchOutcome>;
  /** Partitions handled side by side (each keeps its order). */
  readonly concurrency?: number;
  /**
   * Fetch sizes (fetch-limits.ts; default 4 MiB a fetch, 1 MiB a partition): the handler is given
   * every batch of a fetch before the next fetch, so these bound what a consumer holds at once.
   */
  readonly maxBytes?: number;
  readonly maxBytesPerPartition?: number;
  /** After each (re)assignment: the partitions now this member's, by topic. */
  readonly onAssigned?: (assignment: Readonly<Record<string, readonly number[]>>) => void;
  /** After each handled batch: records behind the partition head. */
  readonly onLag?: (topic: string, partition: number, lag: number) => void;
  /**
   * The stored positions do not belong to the current topics (another cluster, a recreated topic,
   * beyond the end): the subscription does not start and checks again every `recheckMs`.
   */
  readonly onMismatch?: (mismatches: readonly PositionsMismatch[]) => void;
  /** Called once when positions match (again) and consuming starts. */
  readonly onStarted?: () => void;
  readonly recheckMs?: number;
  /** A one-off group (rebuild, replay): deleted when the subscription stops. */
  readonly ephemeral?: boolean;
}

export interface Subscription {
  /** Positions mismatched at the last check (empty while consuming). */
  mismatches(): readonly PositionsMismatch[];
  stop(): Promise<void>;
}

/** Parses a stored or consumed record into the hub event it carries (undefined: not one). */
export function decodeRecord(record: { readonly key: Buffer | string | null; readonly value: Buffer | string | null; readonly headers?: Readonly<Record<string, unknown>> }): HubEvent | undefined {
  const headers: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(record.headers ?? {})) {
    const first: unknown = Array.isArray(v) ? v[0] : v;
    headers[k] = Buffer.isBuffer(first) || typeof first === 'string' ? first.toString() : undefined;
  }
  return eventFromRecord(record.key?.toString() ?? '', headers, record.value?.toString() ?? '');
}

export interface ConsumedEvent {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly event: HubEvent;
}

/** An event looked for: its key, its ce_id and a time it cannot be older than. */
export interface WantedEvent {
  readonly key: string;
  readonly id: string;
  readonly since: Date;
}

/**
 * The event log port (reference design, Layout): what services and hubctl see. No type of the Kafka
 * client crosses it; Kafka failures cross it as DependencyUnavailable.
 */
export interface EventLog {
  /**
   * Appends events to a topic with acks=all; resolves once every in-sync replica has them. Appends
   * made while a send is in flight travel together in the next produce request (group commit).
   */
  append(topic: string, events: readonly HubEvent[]): Promise<void>;
  /** The next offset of every partition of a topic (its high watermark). */
  latestOffsets(topic: string): Promise<Map<number, bigint>>;
  /** First and next offset of every partition of a topic (retention moves the first). */
  offsetRanges(topic: string): Promise<Map<number, { low: bigint; high: bigint }>>;
  /** Per partition, the first offset whose record is not older than `time`. */
  offsetsAt(topic: string, time: Date): Promise<Map<number, bigint>>;
  /**
   * The ce_ids of the wanted events already in a topic, each searched in its key's partition from its
   * `since` time to the end (platformatic-lookup.ts; docs/decisions/0003-each-cdr-once.md). Bounded like an
   * append: fails with DependencyUnavailable when Kafka does not serve the partitions in time.
   */
  findEvents(topic: string, wanted: readonly WantedEvent[]): Promise<Set<string>>;
  /** Joins a consumer group over logical topics (SubscribeOptions; the adapter: packages/event-log, platformatic-subscription.ts); resolves once it consumes or refuses. */
  subscribe(options: SubscribeOptions): Promise<Subscription>;
  /**
   * Checks stored positions against the topics as they are (position-check.ts) and, when they match,
   * binds them to the topics; `rebind` binds them without checking (after a reset from the topics).
   */
  verifyPositions(topics: readonly string[], positions: StoredPositions, options?: { rebind?: boolean }): Promise<PositionsMismatch[]>;
  /** Whether a broker answers (health). */
  reachable(): Promise<boolean>;
  /** A broker configuration value as the cluster reports it; undefined where it is not disclosed (ACLs, managed services). */
  brokerSetting(name: string): Promise<string | undefined>;
  /** Physical name of a logical topic (prefix applied). */
  physical(topic: string): string;
  /** Physical name of a consumer group (prefix applied). */
  physicalGroup(groupId: string): string;
  close(): Promise<void>;
}
