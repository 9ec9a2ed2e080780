import { randomUUID } from 'node:crypto';
import { Consumer } from '@platformatic/kafka';
import { topicName } from '@hub/events';
import type { EventLogOptions } from './kafka-config.ts';
import { DEFAULT_APPEND_TIMEOUT_MS } from './group-commit.ts';
import type { KafkaEventLog } from './event-log-factory.ts';
import { fetchLimits } from './fetch-limits.ts';
import { topicIdReader } from './topic-ids.ts';
import { verifyTopicPositions } from './position-verify.ts';
import { createPlatformaticAppender } from './platformatic-appender.ts';
import { platformaticAdmin, platformaticClusterQueries, platformaticOffsetQueries } from './platformatic-admin.ts';
import { translatePlatformaticError } from './platformatic-failure.ts';
import { platformaticSubscribe } from './platformatic-subscription.ts';
import { findEventsPlatformatic } from './platformatic-lookup.ts';
import { readTopicsPlatformatic } from './platformatic-topic-reader.ts';
import { platformaticTopicAdmin } from './platformatic-topic-admin.ts';
import { PLATFORMATIC_RETRY, platformaticConnection } from './platformatic-connection.ts';

// The EventLog port (and KafkaEventLog's topic administration and reader) over @platformatic/kafka,
// the client chosen by measurement (docs/decisions/0010-kafka-4-by-default.md, The client). Appends: platformatic-appender.ts; subscriptions: platformatic-subscription.ts; failures:
// platformatic-failure.ts. No type of the client crosses the port.

export function createPlatformaticEventLog(options: EventLogOptions): KafkaEventLog {
  const prefix = options.topicPrefix ?? '';
  const timeoutMs = options.appendTimeoutMs ?? DEFAULT_APPEND_TIMEOUT_MS;
  const physical = (topic: string): string => topicName(prefix, topic);
  const physicalGroup = (groupId: string): string => topicName(prefix, groupId);
  const appender = createPlatformaticAppender(options, physical);
  const admin = platformaticAdmin(options);
  const topicIds = topicIdReader(options, options.logger);
  /** What the event log closes with it: the subscriptions' consumers, the topic admins. */
  const open = new Set<() => Promise<void>>();
  const track = <T>(client: T, close: (c: T) => Promise<void>): T => (open.add(() => close(client)), client);
  const newConsumer = (physicalGroupId: string, limits = fetchLimits()) => groupConsumer(options, physicalGroupId, limits);
  const verify = (physicalTopics: readonly string[], positions: Parameters<KafkaEventLog['verifyPositions']>[1], rebind?: boolean) =>
    verifyTopicPositions((topic) => admin.observe(topic), physicalTopics, positions, { rebind, topicIds }).catch((e: unknown) => {
      throw translatePlatformaticError(e);
    });
  // A one-off reader's consumer never joins a group: its id only names it.
  const reader = () => newConsumer(physicalGroup(`reader-${randomUUID()}`));
  return {
    physical,
    physicalGroup,
    append: (topic, events) => appender.append(topic, events),
    ...platformaticOffsetQueries(admin, physical, timeoutMs),
    ...platformaticClusterQueries(admin, timeoutMs),
    findEvents: (topic, wanted) =>
      findEventsPlatformatic({ admin, consumer: reader }, physical(topic), wanted, timeoutMs).catch((e: unknown) => {
        throw translatePlatformaticError(e);
      }),
    subscribe: (subscribeOptions) =>
      platformaticSubscribe(
        {
          consumer: (group) => track(newConsumer(physicalGroup(group), fetchLimits(subscribeOptions)), (c) => c.close(true)),
          physical,
          physicalGroup,
          logger: options.logger,
          verify: (topics, positions) => verify(topics, positions),
          deleteGroup: (group) => admin.admin.deleteGroups({ groups: [group] }),
        },
        subscribeOptions,
      ).catch((e: unknown) => {
        throw translatePlatformaticError(e);
      }),
    verifyPositions: (topics, positions, verifyOptions) => verify(topics.map(physical), positions, verifyOptions?.rebind),
    topicAdmin: () => track(platformaticTopicAdmin(options), (a) => a.close()),
    readTopics: (topics, readOptions) => readTopicsPlatformatic({ admin, consumer: reader, physical }, topics, readOptions),
    async close() {
      await Promise.allSettled([appender.close(), ...[...open].map((close) => close()), admin.close()]);
    },
  };
}

/** A consumer of a group (joined only by a subscription; the one-off readers only fetch). */
function groupConsumer(options: EventLogOptions, physicalGroupId: string, limits: ReturnType<typeof fetchLimits>): Consumer {
  return new Consumer({
    ...platformaticConnection(options),
    groupId: physicalGroupId,
    // A member that died without leaving (SIGKILL) holds its partitions until its session times out:
    // 10 s keeps that pause short while tolerating ordinary GC and I/O stalls.
    sessionTimeout: 10_000,
    heartbeatInterval: 1_000,
    rebalanceTimeout: 60_000,
    autocommit: false,
    autocreateTopics: false,
    ...PLATFORMATIC_RETRY,
    ...limits,
  });
}
