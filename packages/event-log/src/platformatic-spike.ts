// SPIKE, not wired into any service: the append and consume halves of the event log over
// @platformatic/kafka, beside the kafkajs adapter (kafka-event-log.ts), so that the two clients can be
// measured through the same calls (bench/event-log-clients.bench.ts) and against a SASL_SSL listener
// (infra/test/kafka-secured.int.test.ts). No failure translation, position checks or quarantine yet.
import { Admin, Consumer, Producer, stringDeserializers, stringSerializers, type Message } from '@platformatic/kafka';
import { eventHeaders, type HubEvent } from '@hub/events';
import type { EventLogOptions } from './kafka-config.ts';
import { platformaticConnection } from './platformatic-connection.ts';
import { fetchLimits } from './fetch-limits.ts';
import { decodeRecord } from '@hub/core';

export interface SpikeAppender {
  /** acks=all with the idempotent producer; appends made while a send is in flight go in the next one (group commit, as kafka-appender.ts). */
  append(topic: string, events: readonly HubEvent[]): Promise<void>;
  close(): Promise<void>;
}

type SpikeOptions = Pick<EventLogOptions, 'brokers' | 'clientId' | 'ssl' | 'sasl'>;

/** The connection settings in @platformatic/kafka's terms (platformatic-connection.ts, where the adapter takes them from). */
export { platformaticConnection } from './platformatic-connection.ts';

export function createPlatformaticAppender(options: SpikeOptions): SpikeAppender {
  const producer = new Producer({ ...platformaticConnection(options), serializers: stringSerializers, idempotent: true, acks: -1, retries: 8, retryDelay: 200 });
  let queue: Array<{ topic: string; events: readonly HubEvent[]; resolve: () => void; reject: (e: unknown) => void }> = [];
  let inFlight = false;
  const flush = async (): Promise<void> => {
    if (inFlight || queue.length === 0) return;
    inFlight = true;
    const batch = queue;
    queue = [];
    try {
      const messages = batch.flatMap((entry) => entry.events.map((e) => ({ topic: entry.topic, key: e.key, value: JSON.stringify(e.data), headers: eventHeaders(e) })));
      await producer.send({ messages });
      for (const entry of batch) entry.resolve();
    } catch (e) {
      for (const entry of batch) entry.reject(e);
    } finally {
      inFlight = false;
      void flush();
    }
  };
  return {
    append(topic, events) {
      return new Promise<void>((resolve, reject) => {
        queue.push({ topic, events, resolve, reject });
        void flush();
      });
    },
    close: () => producer.close(),
  };
}

/** Reads `count` hub events of a topic from its start in a consumer group; resolves with how many decoded. */
export async function consumePlatformatic(options: SpikeOptions & { groupId: string; topic: string; count: number; groupProtocol?: 'classic' | 'consumer' }): Promise<number> {
  // 'consumer': the broker-driven group protocol of KIP-848 (Kafka 4.0 on), no JoinGroup/SyncGroup rounds.
  const group = options.groupProtocol === 'consumer' ? { groupProtocol: 'consumer' as const } : {};
  const consumer = new Consumer({ ...platformaticConnection(options), groupId: options.groupId, deserializers: stringDeserializers, ...group });
  try {
    // The same fetch bounds as the kafkajs consumers (fetch-limits.ts).
    const classic = options.groupProtocol === 'consumer' ? {} : { sessionTimeout: 10_000, heartbeatInterval: 500 };
    const stream = await consumer.consume({ topics: [options.topic], mode: 'earliest', autocommit: false, ...classic, ...fetchLimits() });
    let decoded = 0;
    let seen = 0;
    // 'data' events: the stream's async iterator costs a promise per record.
    await new Promise<void>((resolve, reject) => {
      stream.on('error', reject);
      stream.on('data', (message: Message<string, string, string, string>) => {
        if (seen >= options.count) return;
        const event = decodeRecord({ key: message.key, value: message.value, headers: Object.fromEntries(message.headers) });
        if (event) decoded++;
        if (++seen >= options.count) resolve();
      });
    });
    await stream.close();
    return decoded;
  } finally {
    await consumer.close(true);
  }
}

/**
 * Kafka's topic id (a UUID given at creation, Metadata v10+) of each physical topic: a topic deleted
 * and created again under the same name gets a new one, whatever its offsets. kafkajs cannot read it.
 */
export async function topicIdsPlatformatic(options: SpikeOptions, topics: readonly string[]): Promise<Map<string, string>> {
  const admin = new Admin(platformaticConnection(options));
  try {
    const metadata = await admin.metadata({ topics: [...topics], forceUpdate: true });
    return new Map([...metadata.topics].map(([name, t]) => [name, t.id]));
  } finally {
    await admin.close();
  }
}
