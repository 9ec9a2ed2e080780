import type { Kafka, Producer } from 'kafkajs';
import { Partitioners } from 'kafkajs';
import type { EventLogOptions } from './kafka-config.ts';
import { translateKafkaError } from './kafka-failure.ts';
import { boundedWith, DEFAULT_APPEND_TIMEOUT_MS, groupCommitAppender, producerRetirement, type KafkaAppender } from './group-commit.ts';

// The append half of the kafkajs event log (kafka-event-log.ts): durable appends (acks=all, idempotent
// producer) gathered into group commits (group-commit.ts), each bounded in time.

export { AppendTimeoutError, DEFAULT_APPEND_TIMEOUT_MS, type KafkaAppender } from './group-commit.ts';

/**
 * Bounds a Kafka call that has no deadline of its own (kafkajs retries connects and metadata requests
 * for tens of seconds while a broker restarts): after ms it fails with DependencyUnavailable.
 */
export function bounded<T>(what: string, ms: number, work: Promise<T>): Promise<T> {
  return boundedWith(translateKafkaError, what, ms, work);
}

export function createKafkaAppender(kafka: Kafka, options: EventLogOptions, physical: (topic: string) => string): KafkaAppender {
  let producer: Producer | undefined;
  let connecting: Promise<Producer> | undefined;

  const getProducer = (): Promise<Producer> => {
    if (producer) return Promise.resolve(producer);
    connecting ??= (async () => {
      // Idempotent producer: a retried send (e.g. while a fresh partition's leader settles) cannot
      // write a record twice. One request in flight keeps the sequence numbers in order; retries are
      // unbounded inside kafkajs and bounded by appendTimeoutMs here instead.
      const p = kafka.producer({
        createPartitioner: Partitioners.DefaultPartitioner,
        allowAutoTopicCreation: false,
        idempotent: true,
        maxInFlightRequests: 1,
      });
      await p.connect();
      producer = p;
      return p;
    })().catch((e: unknown) => {
      connecting = undefined;
      throw e;
    });
    return connecting;
  };

  // kafkajs takes a failed produce request's sequence numbers back, also for partitions the broker
  // wrote (another partition's error in the same response, a request that timed out while the broker
  // waited for its replicas). The next batch would reuse them and the broker would answer "duplicate"
  // for new records it never writes: acknowledged and lost (test/cluster/broker-loss.cluster.test.ts).
  // After a failed or timed-out send the producer is replaced: a new producer id starts afresh. The old
  // one is disconnected at once, which ends its retries of the request (patched into kafkajs, whose
  // idempotent producer otherwise retries without end and reconnects for it): left to settle, the
  // request was written once the broker was back, after the append had been refused and the partner
  // told 503 (infra/test/refused-append.int.test.ts). close() waits for the disconnects, bounded.
  const retirement = producerRetirement();
  return groupCommitAppender(
    options,
    physical,
    {
      async connect() {
        const p = await getProducer();
        return (records) => p.sendBatch({ acks: -1, topicMessages: records.map((t) => ({ topic: t.topic, messages: t.messages.map((m) => ({ ...m })) })) });
      },
      discard() {
        const old = producer;
        producer = undefined;
        connecting = undefined;
        if (old) retirement.retire(() => old.disconnect());
      },
      async close() {
        await Promise.allSettled([producer?.disconnect(), retirement.settled(options.appendTimeoutMs ?? DEFAULT_APPEND_TIMEOUT_MS, translateKafkaError)]);
      },
    },
    translateKafkaError,
  );
}
