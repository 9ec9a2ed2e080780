import type { Admin, ConfigResourceTypes } from 'kafkajs';
import { bounded } from './kafka-appender.ts';
import type { EventLog } from '@hub/core';

// What the Kafka event log (kafka-event-log.ts) asks its shared admin connection: a topic's offsets,
// and the cluster's brokers and settings.

// kafkajs's ConfigResourceTypes is not an ESM named export (its CommonJS index hides it from Node's
// lexer): the protocol's value for a broker's configuration (DescribeConfigs, resource type 4).
const BROKER_CONFIG = 4 as ConfigResourceTypes;

/** A topic's offsets (its ends, its ranges, at a time), each bounded by timeoutMs. */
export function offsetQueries(sharedAdmin: () => Promise<Admin>, physical: (topic: string) => string, timeoutMs: number): Pick<EventLog, 'latestOffsets' | 'offsetRanges' | 'offsetsAt'> {
  return {
    async latestOffsets(topic) {
      // Bounded like an append: a push that waits for the projection before appending (a PATCH, a
      // child PUT) answers "retry later" within appendTimeoutMs while Kafka is away.
      // A leader that just moved or a topic just created answers NOT_LEADER / UNKNOWN_TOPIC (retriable):
      // asked again within the same bound, as kafkajs does for produce and fetch.
      const giveUpAt = Date.now() + timeoutMs;
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
      const offsets = await bounded(`the offsets of ${topic}`, timeoutMs, fetchOffsets());
      return new Map(offsets.map((o) => [o.partition, BigInt(o.high)]));
    },
    async offsetRanges(topic) {
      const offsets = await bounded(`the offsets of ${topic}`, timeoutMs, sharedAdmin().then((a) => a.fetchTopicOffsets(physical(topic))));
      return new Map(offsets.map((o) => [o.partition, { low: BigInt(o.low), high: BigInt(o.high) }]));
    },
    async offsetsAt(topic, time) {
      const offsets = await bounded(`the offsets of ${topic}`, timeoutMs, sharedAdmin().then((a) => a.fetchTopicOffsetsByTimestamp(physical(topic), time.getTime())));
      return new Map(offsets.map((o) => [o.partition, BigInt(o.offset)]));
    },
  };
}

/** Whether a broker answers, and a broker's setting (undefined when it cannot be read). */
export function clusterQueries(sharedAdmin: () => Promise<Admin>): Pick<EventLog, 'reachable' | 'brokerSetting'> {
  return {
    async reachable() {
      return sharedAdmin()
        .then((a) => a.describeCluster())
        .then((c) => c.brokers.length > 0, () => false);
    },
    async brokerSetting(name) {
      try {
        const admin = await sharedAdmin();
        const { brokers } = await admin.describeCluster();
        const broker = brokers[0];
        if (!broker) return undefined;
        const { resources } = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: BROKER_CONFIG, name: String(broker.nodeId), configNames: [name] }] });
        return resources[0]?.configEntries.find((e) => e.configName === name)?.configValue ?? undefined;
      } catch {
        return undefined;
      }
    },
  };
}
