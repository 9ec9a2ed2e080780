import type { EventLog } from '@hub/core';
import type { HubEvent } from '@hub/events';
import type { EventLogOptions } from './kafka-config.ts';
import type { TopicAdmin } from './topics-admin.ts';
import type { ReadTopicsOptions, TopicRead } from './topic-reader.ts';

// The event log: the Kafka adapter of @hub/core's EventLog port, the only package that imports the Kafka
// client (eslint no-restricted-imports), @platformatic/kafka (docs/decisions/0010-kafka-4-by-default.md,
// The client). Everything else sees the port or the two additions below; no type of the client crosses it.

export { AppendTimeoutError, DEFAULT_APPEND_TIMEOUT_MS } from './group-commit.ts';

/**
 * The Kafka adapter with what infrastructure code and tests ask beyond the port: administering the
 * topics (the stack's set-up, the migrate job, broker tests) and reading topics back. Services and
 * hubctl get the EventLog port.
 */
export interface KafkaEventLog extends EventLog {
  /** Topic administration over a connection of its own (closed by `close`, or with the event log). */
  topicAdmin(): TopicAdmin;
  /** Reads logical topics from their beginning (topic-reader.ts), bounded by `options.timeoutMs`. */
  readTopics(topics: readonly string[], options: ReadTopicsOptions): Promise<TopicRead>;
}

/**
 * The event log. The client is imported on first use: its import alone costs about half a second of
 * CPU (docs/decisions/0010-kafka-4-by-default.md, The client), which a hubctl command that never
 * touches Kafka, or `--help`, should not pay.
 */
export async function createEventLog(options: EventLogOptions): Promise<KafkaEventLog> {
  const { createPlatformaticEventLog } = await import('./platformatic-event-log.ts');
  return createPlatformaticEventLog(options);
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
