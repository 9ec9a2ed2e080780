import { readFileSync } from 'node:fs';
import { topicName, type TopicDefinition } from '@hub/events';

// Topic administration (infra/topics.json): what the stack's set-up, the migrate job, infra code and
// tests ask of the cluster, in the adapter's own types. The Kafka adapter implements TopicAdmin
// (platformatic-topic-admin.ts); no type of the Kafka client crosses it. Names are physical (the cluster's,
// prefix applied); offsets are Kafka's decimal strings, as ConsumedRecord's.

/** A broker of the cluster as its metadata names it. */
export interface BrokerDescription {
  readonly nodeId: number;
  readonly host: string;
  readonly port: number;
}

export interface ClusterDescription {
  readonly clusterId: string;
  readonly brokers: readonly BrokerDescription[];
  /** Node id of the active controller; null when the cluster names none. */
  readonly controller: number | null;
}

export interface PartitionDescription {
  readonly partitionId: number;
  /** Node id of the leader; below 0 while the partition has none. */
  readonly leader: number;
  readonly replicas: readonly number[];
  readonly isr: readonly number[];
}

export interface TopicDescription {
  readonly name: string;
  readonly partitions: readonly PartitionDescription[];
}

/** First and next offset of a partition (retention moves the first). */
export interface PartitionOffsets {
  readonly partition: number;
  readonly low: string;
  readonly high: string;
}

/** A topic to create. */
export interface NewTopic {
  readonly name: string;
  readonly partitions: number;
  readonly replicationFactor: number;
  readonly config?: Readonly<Record<string, string>>;
}

/** Configuration values of one topic, as DescribeConfigs answers them. */
export interface TopicConfigDescription {
  readonly resourceName: string;
  readonly configEntries: ReadonlyArray<{ readonly configName: string; readonly configValue: string | null }>;
}

/** A consumer group's committed offsets of one topic ("-1": none committed). */
export interface GroupTopicOffsets {
  readonly topic: string;
  readonly partitions: ReadonlyArray<{ readonly partition: number; readonly offset: string }>;
}

/**
 * The cluster's topics and groups, for infrastructure code and tests (services get the EventLog port).
 * Connects on first use; `close` ends it (the event log that made it closes it too). A Kafka failure
 * is a KafkaRequestFailed (a DependencyUnavailable that says whether asking again may succeed).
 */
export interface TopicAdmin {
  describeCluster(): Promise<ClusterDescription>;
  listTopics(): Promise<string[]>;
  /** Partitions and replicas of each topic. */
  describeTopics(topics: readonly string[]): Promise<{ topics: TopicDescription[] }>;
  /** True when it created every topic; false when one existed already. */
  createTopics(topics: readonly NewTopic[], options?: { readonly waitForLeaders?: boolean }): Promise<boolean>;
  deleteTopics(topics: readonly string[], options?: { readonly timeoutMs?: number }): Promise<void>;
  /** First and next offset of every partition of a topic. */
  topicOffsets(topic: string): Promise<PartitionOffsets[]>;
  /** Deletes every record below `offset` of each partition given (what retention does). */
  deleteRecords(topic: string, partitions: ReadonlyArray<{ readonly partition: number; readonly offset: string }>): Promise<void>;
  describeTopicConfigs(topics: readonly string[], configNames: readonly string[]): Promise<{ resources: TopicConfigDescription[] }>;
  /** Sets a topic's configuration; what `config` leaves out returns to the broker's default (AlterConfigs). */
  replaceTopicConfig(topic: string, config: Readonly<Record<string, string>>): Promise<void>;
  /** A consumer group's committed offsets of the topics. */
  committedOffsets(group: string, topics: readonly string[]): Promise<GroupTopicOffsets[]>;
  close(): Promise<void>;
}

/** One entry of infra/topics.json (declared by the modules, @hub/modules topicDefinitions). */
export type { TopicDefinition } from '@hub/events';

/** Reads a topic definition file ({ "topics": [...] }, as infra/topics.json). */
export function readTopicDefinitions(file: string): TopicDefinition[] {
  return (JSON.parse(readFileSync(file, 'utf8')) as { topics: TopicDefinition[] }).topics;
}

/** Default retention of the change topics that a snapshot topic backs: 30 days (docs/decisions/0014-snapshot-topics.md). */
export const CHANGE_RETENTION_MS = 2_592_000_000;

/**
 * The definitions with the retention of the locations, tariffs and tokens change topics set to
 * `retentionMs` (HUB_CHANGE_RETENTION_MS; -1: forever). Their snapshot topics keep tombstones as long
 * (delete.retention.ms), so a tail replay never misses one. Applied when a topic is created; an
 * existing topic keeps its configuration.
 */
export function withChangeRetention(definitions: readonly TopicDefinition[], retentionMs: number): TopicDefinition[] {
  const changes = new Set(definitions.filter((d) => d.snapshot !== undefined).map((d) => d.name));
  const snapshots = new Set(definitions.flatMap((d) => (d.snapshot === undefined ? [] : [d.snapshot])));
  return definitions.map((d) => {
    if (changes.has(d.name)) return { ...d, config: { ...d.config, 'retention.ms': String(retentionMs) } };
    if (snapshots.has(d.name) && retentionMs > 0) return { ...d, config: { ...d.config, 'delete.retention.ms': String(retentionMs) } };
    return d;
  });
}

/**
 * Creates missing topics; existing topics keep their data and their partitions, so a second start of
 * the stack changes nothing. Returns the names it created. What it will not do is reported to `report`:
 * - Partitions are never added to an existing topic. Every topic is keyed, and a key's partition is
 *   its hash modulo the count: more partitions would send an object's next events to another
 *   partition, out of order with its earlier ones (a session's older state could then win). A new
 *   partition count is a new topic version.
 * - A topic created on fewer brokers than its replication factor gets fewer replicas (a local stack
 *   has one broker), and acks=all then means fewer copies.
 */
export interface TopicNotice {
  /** replicas-clamped: created with fewer replicas than defined; partitions-kept: an existing topic's count differs from its definition. */
  readonly kind: 'replicas-clamped' | 'partitions-kept';
  readonly topic: string;
  readonly message: string;
}

export async function ensureTopics(
  admin: TopicAdmin,
  definitions: readonly TopicDefinition[],
  prefix = '',
  report: (notice: TopicNotice) => void = () => undefined,
  /**
   * fullReplicationWithinMs: the cluster is known to have enough brokers (a multi-node test quorum),
   * so a broker missing for a moment must not make topics smaller for good: wait up to this long for
   * the brokers the definitions' replication needs instead of clamping.
   */
  options: { readonly fullReplicationWithinMs?: number } = {},
): Promise<string[]> {
  let brokers = (await admin.describeCluster()).brokers.length;
  const within = options.fullReplicationWithinMs;
  if (within !== undefined) {
    const needed = Math.max(1, ...definitions.map((d) => d.replicationFactor));
    for (const deadline = Date.now() + within; brokers < needed && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 250));
      brokers = (await admin.describeCluster()).brokers.length;
    }
    if (brokers < needed) throw new Error(`${brokers} brokers in the cluster after ${within} ms; the topics' replication needs ${needed}`);
  }
  const existing = new Set(await admin.listTopics());
  const name = (d: TopicDefinition) => topicName(prefix, d.name);
  const missing = definitions.filter((d) => !existing.has(name(d)));
  if (missing.length > 0) {
    await admin.createTopics(
      missing.map((d) => {
        const replicationFactor = Math.min(d.replicationFactor, brokers);
        if (replicationFactor < d.replicationFactor) {
          report({ kind: 'replicas-clamped', topic: name(d), message: `topic ${name(d)} created with ${replicationFactor} replica(s), not ${d.replicationFactor}: only ${brokers} broker(s) in the cluster` });
        }
        const config = Object.fromEntries(Object.entries(d.config)
          // min.insync.replicas above the replica count would refuse every acks=all write.
          .map(([k, v]) => [k, k === 'min.insync.replicas' ? String(Math.min(Number(v), replicationFactor)) : v]));
        return { name: name(d), partitions: d.partitions, replicationFactor, config };
      }),
      { waitForLeaders: false },
    );
  }
  await waitForLeaders(admin, definitions.map(name));
  const present = definitions.filter((d) => existing.has(name(d)));
  if (present.length > 0) {
    const meta = await admin.describeTopics(present.map(name));
    for (const t of meta.topics) {
      const d = present.find((p) => name(p) === t.name);
      if (d && t.partitions.length !== d.partitions) {
        report({ kind: 'partitions-kept', topic: t.name, message: `topic ${t.name} has ${t.partitions.length} partitions, its definition ${d.partitions}: left as is (adding partitions would reorder each key's events; a new count needs a new topic version)` });
      }
    }
  }
  return missing.map(name);
}

/** Waits until every partition of the topics has a leader (a fresh topic takes a moment). */
export async function waitForLeaders(admin: TopicAdmin, topicNames: readonly string[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const meta = await admin.describeTopics(topicNames);
      if (meta.topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))) return;
    } catch (e) {
      last = e; // UNKNOWN_TOPIC_OR_PARTITION while the controller propagates the new topic
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`topics without leaders after ${timeoutMs} ms: ${topicNames.join(', ')}`, { cause: last });
}
