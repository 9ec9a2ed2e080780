import { Admin, ConfigResourceTypes, ListOffsetTimestamps } from '@platformatic/kafka';
import type { EventLog } from '@hub/core';
import type { EventLogOptions } from './kafka-config.ts';
import { boundedWith } from './group-commit.ts';
import { platformaticRetriable, translatePlatformaticError } from './platformatic-failure.ts';
import { PLATFORMATIC_RETRY, platformaticConnection } from './platformatic-connection.ts';
import { retrying } from './position-verify.ts';
import type { ObservedTopic } from './position-check.ts';
import type { PartitionOffsets } from './topics-admin.ts';

// What the @platformatic/kafka event log (platformatic-event-log.ts) asks its shared admin client: a
// topic's offsets, the cluster's id, brokers and settings.
// The client connects on first use and reconnects by itself; each call is bounded like an append.

export interface PlatformaticAdmin {
  readonly admin: Admin;
  /** First and next offset of every partition of a physical topic (ListOffsets, earliest and latest). */
  offsets(physicalTopic: string, forceUpdate?: boolean): Promise<PartitionOffsets[]>;
  /** The next offset of every partition of a physical topic (ListOffsets, latest only). */
  ends(physicalTopic: string): Promise<Map<number, bigint>>;
  /** Per partition, the first offset whose timestamp is not older than `time`; the end where none is. */
  offsetsAt(physicalTopic: string, time: number): Promise<Map<number, bigint>>;
  observe(physicalTopic: string, retryForMs?: number): Promise<ObservedTopic>;
  close(): Promise<void>;
}

export function platformaticAdmin(options: EventLogOptions): PlatformaticAdmin {
  // retries: the client's own for a request that failed retriably; the callers bound the whole call.
  const admin = new Admin({ ...platformaticConnection(options), ...PLATFORMATIC_RETRY });
  // The partition count from the client's metadata, refreshed on every call only where a topic
  // recreated must be seen at once (the position check): latestOffsets runs on every push that waits
  // for its projection, and a forced Metadata request each time costs the brokers a request per push.
  const partitionsOf = async (topic: string, forceUpdate = false): Promise<number[]> => {
    const metadata = await admin.metadata({ topics: [topic], forceUpdate });
    const count = metadata.topics.get(topic)?.partitionsCount ?? 0;
    return Array.from({ length: count }, (_, i) => i);
  };
  const listAt = async (topic: string, partitions: readonly number[], timestamp: bigint): Promise<Map<number, bigint>> => {
    const listed = await admin.listOffsets({ topics: [{ name: topic, partitions: partitions.map((partitionIndex) => ({ partitionIndex, timestamp })) }] });
    return new Map((listed.find((t) => t.name === topic)?.partitions ?? []).map((p) => [p.partitionIndex, p.offset]));
  };
  const offsets = async (topic: string, forceUpdate = false): Promise<PartitionOffsets[]> => {
    const partitions = await partitionsOf(topic, forceUpdate);
    const [lows, highs] = await Promise.all([listAt(topic, partitions, ListOffsetTimestamps.EARLIEST), listAt(topic, partitions, ListOffsetTimestamps.LATEST)]);
    return partitions.map((partition) => ({ partition, low: String(lows.get(partition) ?? 0n), high: String(highs.get(partition) ?? 0n) }));
  };
  return {
    admin,
    offsets,
    ends: async (topic) => listAt(topic, await partitionsOf(topic), ListOffsetTimestamps.LATEST),
    async offsetsAt(topic, time) {
      const partitions = await partitionsOf(topic);
      const [at, highs] = await Promise.all([listAt(topic, partitions, BigInt(time)), listAt(topic, partitions, ListOffsetTimestamps.LATEST)]);
      // Kafka answers -1 where no record is that recent: the end then.
      return new Map(partitions.map((p) => [p, (at.get(p) ?? -1n) >= 0n ? (at.get(p) ?? 0n) : (highs.get(p) ?? 0n)]));
    },
    observe: (topic, retryForMs = 30_000) =>
      retrying(async () => {
        const [metadata, ranges] = await Promise.all([admin.metadata({ topics: [] }), offsets(topic, true)]);
        return { clusterId: metadata.id, ranges: new Map(ranges.map((o) => [o.partition, { low: BigInt(o.low), high: BigInt(o.high) }])) };
      }, platformaticRetriable, retryForMs),
    close: () => admin.close(),
  };
}

/** A topic's offsets (its ends, its ranges, at a time), each bounded by timeoutMs. */
export function platformaticOffsetQueries(admin: PlatformaticAdmin, physical: (topic: string) => string, timeoutMs: number): Pick<EventLog, 'latestOffsets' | 'offsetRanges' | 'offsetsAt'> {
  const bounded = <T>(topic: string, work: Promise<T>) => boundedWith(translatePlatformaticError, `the offsets of ${topic}`, timeoutMs, work);
  return {
    async latestOffsets(topic) {
      // A leader that just moved or a topic just created answers NOT_LEADER / UNKNOWN_TOPIC
      // (retriable): asked again within the same bound.
      return bounded(topic, retrying(() => admin.ends(physical(topic)), platformaticRetriable, timeoutMs, 100));
    },
    async offsetRanges(topic) {
      const offsets = await bounded(topic, admin.offsets(physical(topic)));
      return new Map(offsets.map((o) => [o.partition, { low: BigInt(o.low), high: BigInt(o.high) }]));
    },
    offsetsAt: (topic, time) => bounded(topic, admin.offsetsAt(physical(topic), time.getTime())),
  };
}

/** Whether a broker answers, and a broker's setting (undefined when it cannot be read). */
export function platformaticClusterQueries(admin: PlatformaticAdmin, timeoutMs: number): Pick<EventLog, 'reachable' | 'brokerSetting'> {
  return {
    async reachable() {
      return boundedWith(translatePlatformaticError, 'a metadata request', timeoutMs, admin.admin.metadata({ topics: [], forceUpdate: true })).then((m) => m.brokers.size > 0, () => false);
    },
    async brokerSetting(name) {
      try {
        const metadata = await admin.admin.metadata({ topics: [] });
        const [nodeId] = [...metadata.brokers.keys()];
        if (nodeId === undefined) return undefined;
        const described = await admin.admin.describeConfigs({ includeSynonyms: false, resources: [{ resourceType: ConfigResourceTypes.BROKER, resourceName: String(nodeId), configurationKeys: [name] }] });
        return described[0]?.configs.find((c) => c.name === name)?.value ?? undefined;
      } catch {
        return undefined;
      }
    },
  };
}
