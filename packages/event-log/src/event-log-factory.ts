import type { EventLogOptions } from './kafka-config.ts';
import { createKafkaEventLog, type KafkaEventLog } from './kafka-event-log.ts';

// One setting picks the Kafka client behind the event log (KAFKA_CLIENT, @hub/config readKafkaClient):
// kafkajs by default, or @platformatic/kafka, so the two are compared on the same tests before one is
// chosen (docs/decisions/0010-kafka-4-by-default.md, Wired beside kafkajs). Both keep the port's semantics.

export type EventLogClient = 'kafkajs' | 'platformatic';
export const EVENT_LOG_CLIENTS: readonly EventLogClient[] = ['kafkajs', 'platformatic'];

export interface EventLogFactoryOptions extends EventLogOptions {
  /** The Kafka client; absent: kafkajs. */
  readonly client?: EventLogClient | undefined;
}

/**
 * The event log on the chosen client. @platformatic/kafka is imported only when chosen: its import
 * alone costs about 1 s of CPU, paid by every service and hubctl process otherwise.
 */
export async function createEventLog(options: EventLogFactoryOptions): Promise<KafkaEventLog> {
  const { client, ...rest } = options;
  if (client !== 'platformatic') return createKafkaEventLog(rest);
  const { createPlatformaticEventLog } = await import('./platformatic-event-log.ts');
  return createPlatformaticEventLog(rest);
}
