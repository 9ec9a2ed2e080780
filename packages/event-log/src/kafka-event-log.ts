import { Kafka, logLevel, type Admin, type Consumer } from 'kafkajs';
import { topicName, type HubEvent } from '@hub/events';
import { createKafkaAppender } from './kafka-appender.ts';
import { clusterQueries, offsetQueries } from './kafka-offsets.ts';
import { translateKafkaError } from './kafka-failure.ts';
import { kafkaLogLevel, type EventLogOptions } from './kafka-config.ts';
import { kafkajsConnection } from './kafka-client-config.ts';
import { fetchLimits } from './fetch-limits.ts';
import { kafkaSubscribe, verifyPositions } from './kafka-subscription.ts';
import { topicIdReader } from './topic-ids.ts';
import { findEventsInTopic } from './kafka-lookup.ts';
import type { EventLog } from '@hub/core';
import type { TopicAdmin } from './topics-admin.ts';
import type { ReadTopicsOptions, TopicRead } from './topic-reader.ts';
import { kafkaTopicAdmin } from './kafka-topic-admin.ts';
import { readKafkaTopics } from './kafka-topic-reader.ts';
import { EPHEMERAL_FETCH_WAIT_MS } from './kafka-subscription.ts';

// The Kafka adapter of the EventLog port (reference design, Layout): the package event-log is the only
// one that imports the Kafka client (eslint no-restricted-imports). Everything else sees the port:
// append events durably (kafka-appender.ts), subscribe to them in a consumer group (kafka-subscription.ts; the port is @hub/core event-log.ts).

export { AppendTimeoutError, DEFAULT_APPEND_TIMEOUT_MS } from './kafka-appender.ts';

/**
 * The Kafka adapter with what infrastructure code and tests ask beyond the port: administering the
 * topics (the stack's set-up, the migrate job, broker tests) and reading topics back. Services and
 * hubctl get the EventLog port. No type of the Kafka client crosses it either.
 */
export interface KafkaEventLog extends EventLog {
  /** Topic administration over a connection of its own (closed by `close`, or with the event log). */
  topicAdmin(): TopicAdmin;
  /** Reads logical topics from their beginning (topic-reader.ts), bounded by `options.timeoutMs`. */
  readTopics(topics: readonly string[], options: ReadTopicsOptions): Promise<TopicRead>;
}

export function createKafkaEventLog(options: EventLogOptions): KafkaEventLog {
  const prefix = options.topicPrefix ?? '';
  const kafka = kafkaClient(options);
  const open: Array<{ disconnect(): Promise<void> }> = [];
  const physical = (topic: string): string => topicName(prefix, topic);
  const appender = createKafkaAppender(kafka, options, physical);
  const topicIds = topicIdReader(options, options.logger);
  const sharedAdmin = lazyAdmin(kafka, open);

  const physicalGroup = (groupId: string): string => topicName(prefix, groupId);
  const newConsumer = (groupId: string, consumerOptions: ConsumerOptions = {}): Consumer => groupMember(kafka, physicalGroup(groupId), consumerOptions);
  const consumer = (groupId: string, consumerOptions: ConsumerOptions = {}): Consumer => {
    const c = newConsumer(groupId, consumerOptions);
    open.push(c);
    return c;
  };
  return {
    physical,
    physicalGroup,
    append: (topic, events) => appender.append(topic, events),
    ...offsetQueries(sharedAdmin, physical, options.appendTimeoutMs ?? 10_000),
    ...clusterQueries(sharedAdmin),
    async findEvents(topic, wanted) {
      // Its consumer is disconnected when the search ends, so it is not kept in `open`.
      return findEventsInTopic({ admin: sharedAdmin, consumer: (g) => newConsumer(g) }, physical(topic), wanted, options.appendTimeoutMs ?? 10_000).catch((e: unknown) => {
        throw translateKafkaError(e);
      });
    },
    subscribe(subscribeOptions) {
      return kafkaSubscribe({ consumer, admin: sharedAdmin, physical, physicalGroup, logger: options.logger, topicIds }, subscribeOptions).catch((e: unknown) => {
        throw translateKafkaError(e);
      });
    },
    async verifyPositions(topics, positions, verifyOptions) {
      return verifyPositions(await sharedAdmin(), topics.map(physical), positions, { ...verifyOptions, topicIds }).catch((e: unknown) => {
        throw translateKafkaError(e);
      });
    },
    topicAdmin: () => kafkaTopicAdmin(kafka, (client) => open.push(client)),
    readTopics(topics, readOptions) {
      return readKafkaTopics(
        {
          // Disconnected when the read ends, so not kept in `open`.
          consumer: (g) => newConsumer(g, { maxWaitMs: EPHEMERAL_FETCH_WAIT_MS }),
          physical,
          physicalGroup,
          offsets: async (topic) => (await sharedAdmin()).fetchTopicOffsets(topic),
          deleteGroup: async (group) => void (await (await sharedAdmin()).deleteGroups([group])),
        },
        topics,
        readOptions,
      );
    },
    async close() {
      await Promise.allSettled([appender.close(), ...open.map((c) => c.disconnect())]);
    },
  };
}

type ConsumerOptions = { maxBytes?: number; maxBytesPerPartition?: number; maxWaitMs?: number };

/** The Kafka client, its log lines through the service's logger. */
function kafkaClient(options: EventLogOptions): Kafka {
  return new Kafka({
    ...kafkajsConnection(options),
    logLevel: logLevel.WARN,
    retry: { retries: 8, initialRetryTime: 200, maxRetryTime: 5000 },
    logCreator: () => (entry) => {
      const { message, ...meta } = entry.log;
      options.logger[kafkaLogLevel(entry.level, entry.namespace, entry.log)](`kafka: ${message}`, { ...meta, namespace: entry.namespace });
    },
  });
}

/** One admin connection, made on first use and again after a failed connect; kept in `open` to close. */
function lazyAdmin(kafka: Kafka, open: Array<{ disconnect(): Promise<void> }>): () => Promise<Admin> {
  let adminClient: Promise<Admin> | undefined;
  return (): Promise<Admin> => {
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
}

/** A consumer-group member under its physical group name. */
function groupMember(kafka: Kafka, physicalGroupId: string, consumerOptions: ConsumerOptions): Consumer {
  // A member that died without leaving (SIGKILL) holds its partitions until its session times
  // out: 10 s keeps that pause short while tolerating ordinary GC and I/O stalls.
  return kafka.consumer({
    groupId: physicalGroupId,
    allowAutoTopicCreation: false,
    sessionTimeout: 10_000,
    heartbeatInterval: 1_000,
    // Never kafkajs's 10 MiB a fetch: what a consumer holds decoded is bounded by this (fetch-limits.ts).
    ...fetchLimits(consumerOptions),
    // How long a fetch that finds nothing waits at the broker (kafkajs: 5 s). Stopping a consumer
    // waits for its fetch in flight, so a one-off reader at the end of its topics asks for less.
    ...(consumerOptions.maxWaitMs !== undefined ? { maxWaitTimeInMs: consumerOptions.maxWaitMs } : {}),
  });
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
