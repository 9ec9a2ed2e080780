import type { Admin, ConfigResourceTypes, Kafka } from 'kafkajs';
import { kafkaRequestFailure } from './kafka-failure.ts';
import type { TopicAdmin } from './topics-admin.ts';

// The Kafka adapter of TopicAdmin (topics-admin.ts): a kafkajs admin connection of its own, made on
// first use. Every answer is copied into the port's types, every client error becomes
// KafkaRequestFailed, so nothing of kafkajs reaches the caller.

// kafkajs's ConfigResourceTypes is not an ESM named export (see kafka-offsets.ts): a topic's
// configuration is resource type 2 of DescribeConfigs and AlterConfigs.
const TOPIC_CONFIG = 2 as ConfigResourceTypes;

/** A TopicAdmin over its own connection; `track` keeps it for the event log's close. */
export function kafkaTopicAdmin(kafka: Kafka, track: (client: { disconnect(): Promise<void> }) => void): TopicAdmin {
  const admin = kafka.admin();
  track(admin);
  let connected: Promise<Admin> | undefined;
  const connect = (): Promise<Admin> => {
    connected ??= admin.connect().then(() => admin, (e: unknown) => {
      connected = undefined;
      throw e;
    });
    return connected;
  };
  const ask = async <T>(call: (a: Admin) => Promise<T>): Promise<T> => {
    try {
      return await call(await connect());
    } catch (e) {
      throw kafkaRequestFailure(e);
    }
  };
  return {
    describeCluster: () =>
      ask(async (a) => {
        const c = await a.describeCluster();
        return { clusterId: c.clusterId, controller: c.controller, brokers: c.brokers.map((b) => ({ nodeId: b.nodeId, host: b.host, port: b.port })) };
      }),
    listTopics: () => ask((a) => a.listTopics()),
    describeTopics: (topics) => ask((a) => describeTopics(a, topics)),
    createTopics: (topics, options = {}) =>
      ask((a) =>
        a.createTopics({
          waitForLeaders: options.waitForLeaders ?? true,
          topics: topics.map((t) => ({
            topic: t.name,
            numPartitions: t.partitions,
            replicationFactor: t.replicationFactor,
            ...(t.config ? { configEntries: Object.entries(t.config).map(([name, value]) => ({ name, value })) } : {}),
          })),
        }),
      ),
    deleteTopics: (topics, options = {}) => ask((a) => a.deleteTopics({ topics: [...topics], ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}) })),
    topicOffsets: (topic) => ask(async (a) => (await a.fetchTopicOffsets(topic)).map((o) => ({ partition: o.partition, low: o.low, high: o.high }))),
    deleteRecords: (topic, partitions) => ask((a) => a.deleteTopicRecords({ topic, partitions: partitions.map((p) => ({ partition: p.partition, offset: p.offset })) })),
    describeTopicConfigs: (topics, configNames) => ask((a) => describeTopicConfigs(a, topics, configNames)),
    replaceTopicConfig: (topic, config) =>
      ask(async (a) => {
        await a.alterConfigs({ validateOnly: false, resources: [{ type: TOPIC_CONFIG, name: topic, configEntries: Object.entries(config).map(([name, value]) => ({ name, value })) }] });
      }),
    committedOffsets: (group, topics) =>
      ask(async (a) => (await a.fetchOffsets({ groupId: group, topics: [...topics] })).map((t) => ({ topic: t.topic, partitions: t.partitions.map((p) => ({ partition: p.partition, offset: p.offset })) }))),
    async close() {
      connected = undefined;
      await admin.disconnect();
    },
  };
}

async function describeTopics(a: Admin, topics: readonly string[]): ReturnType<TopicAdmin['describeTopics']> {
  const meta = await a.fetchTopicMetadata({ topics: [...topics] });
  return {
    topics: meta.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({ partitionId: p.partitionId, leader: p.leader, replicas: [...p.replicas], isr: [...p.isr] })),
    })),
  };
}

async function describeTopicConfigs(a: Admin, topics: readonly string[], configNames: readonly string[]): ReturnType<TopicAdmin['describeTopicConfigs']> {
  const { resources } = await a.describeConfigs({ includeSynonyms: false, resources: topics.map((name) => ({ type: TOPIC_CONFIG, name, configNames: [...configNames] })) });
  return { resources: resources.map((r) => ({ resourceName: r.resourceName, configEntries: r.configEntries.map((c) => ({ configName: c.configName, configValue: c.configValue })) })) };
}
