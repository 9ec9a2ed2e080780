import { ConfigResourceTypes } from '@platformatic/kafka';
import type { EventLogOptions } from './kafka-config.ts';
import { platformaticAdmin } from './platformatic-admin.ts';
import { brokerErrorName, platformaticRequestFailure } from './platformatic-failure.ts';
import { waitForLeaders, type TopicAdmin } from './topics-admin.ts';

// TopicAdmin (topics-admin.ts) over an @platformatic/kafka admin client of its own: every answer
// copied into the port's types, every client error a KafkaRequestFailed (platformatic-failure.ts).

// Long because: one method per TopicAdmin call, each a short translation of the client's answer.
export function platformaticTopicAdmin(options: EventLogOptions): TopicAdmin {
  const client = platformaticAdmin(options);
  const { admin } = client;
  const ask = async <T>(call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (e) {
      throw platformaticRequestFailure(e);
    }
  };
  const topicAdmin: TopicAdmin = {
    describeCluster: () =>
      ask(async () => {
        const m = await admin.metadata({ topics: [], forceUpdate: true });
        return { clusterId: m.id, controller: m.controllerId >= 0 ? m.controllerId : null, brokers: [...m.brokers].map(([nodeId, b]) => ({ nodeId, host: b.host, port: b.port })) };
      }),
    listTopics: () => ask(() => admin.listTopics()),
    describeTopics: (topics) =>
      ask(async () => {
        const m = await admin.metadata({ topics: [...topics], forceUpdate: true });
        return { topics: [...m.topics].filter(([name]) => topics.includes(name)).map(([name, t]) => ({ name, partitions: t.partitions.map((p, partitionId) => ({ partitionId, leader: p.leader, replicas: [...p.replicas], isr: [...p.isr] })) })) };
      }),
    // TopicAdmin.createTopics: false when every topic asked for existed already.
    createTopics: (topics, createOptions = {}) =>
      ask(async () => {
        let existed = 0;
        for (const t of topics) {
          const configs = Object.entries(t.config ?? {}).map(([name, value]) => ({ name, value }));
          await admin.createTopics({ topics: [t.name], partitions: t.partitions, replicas: t.replicationFactor, configs }).catch((e: unknown) => {
            if (brokerErrorName(e) !== 'TOPIC_ALREADY_EXISTS') throw e;
            existed++;
          });
        }
        if (createOptions.waitForLeaders ?? true) await waitForLeaders(topicAdmin, topics.map((t) => t.name));
        return existed < topics.length || topics.length === 0;
      }),
    deleteTopics: (topics) => ask(() => admin.deleteTopics({ topics: [...topics] })),
    topicOffsets: (topic) => ask(() => client.offsets(topic, true)),
    deleteRecords: (topic, partitions) =>
      ask(async () => void (await admin.deleteRecords({ topics: [{ name: topic, partitions: partitions.map((p) => ({ partition: p.partition, offset: BigInt(p.offset) })) }] }))),
    describeTopicConfigs: (topics, configNames) =>
      ask(async () => {
        const described = await admin.describeConfigs({ includeSynonyms: false, resources: topics.map((resourceName) => ({ resourceType: ConfigResourceTypes.TOPIC, resourceName, configurationKeys: [...configNames] })) });
        return { resources: described.map((r) => ({ resourceName: r.resourceName, configEntries: r.configs.map((c) => ({ configName: c.name, configValue: c.value ?? null })) })) };
      }),
    // AlterConfigs (not the incremental one): what `config` leaves out returns to the broker's default.
    replaceTopicConfig: (topic, config) =>
      ask(() => admin.alterConfigs({ validateOnly: false, resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: topic, configs: Object.entries(config).map(([name, value]) => ({ name, value })) }] })),
    committedOffsets: (group, topics) =>
      ask(async () => {
        const m = await admin.metadata({ topics: [...topics] });
        const request = topics.map((name) => ({ name, partitionIndexes: Array.from({ length: m.topics.get(name)?.partitionsCount ?? 0 }, (_, i) => i) }));
        const [answer] = await admin.listConsumerGroupOffsets({ groups: [{ groupId: group, topics: request }] });
        // "-1" where the group committed nothing (TopicAdmin's committed offsets).
        return request.map((t) => {
          const committed = answer?.topics.find((a) => a.name === t.name)?.partitions ?? [];
          return { topic: t.name, partitions: t.partitionIndexes.map((partition) => ({ partition, offset: String(committed.find((c) => c.partitionIndex === partition)?.committedOffset ?? -1n) })) };
        });
      }),
    close: () => client.close(),
  };
  return topicAdmin;
}
