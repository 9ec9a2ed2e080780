import { compatibilityPartitioner, murmur2, Producer, ProduceAcks, stringSerializers } from '@platformatic/kafka';
import type { EventLogOptions } from './kafka-config.ts';
import { DEFAULT_APPEND_TIMEOUT_MS, groupCommitAppender, producerRetirement, type KafkaAppender } from './group-commit.ts';
import { translatePlatformaticError } from './platformatic-failure.ts';
import { PLATFORMATIC_RETRY, platformaticConnection } from './platformatic-connection.ts';

// The append half of the @platformatic/kafka event log (platformatic-event-log.ts): acks=all, the idempotent producer, one produce request at a time
// carrying every append queued meanwhile (group-commit.ts), each append bounded by appendTimeoutMs,
// and the producer replaced after a failed or timed-out send.

/**
 * The partition of a key, as Kafka's Java client computes it, and kafkajs, which wrote the topics of
 * earlier hub releases (murmur2 of the key, sign bit cleared, modulo the partition count):
 * @platformatic/kafka's own default keeps the sign bit as an unsigned number and would put about half
 * the keys in another partition than the one their earlier events are in, splitting an object's
 * history over two partitions (and breaking findEvents, which looks for a key in its partition). The
 * producer takes the remainder itself.
 */
export const javaCompatiblePartitioner = compatibilityPartitioner;

/** The partition javaCompatiblePartitioner gives a key in a topic of `partitions` partitions. */
export function partitionOfKey(key: string, partitions: number): number {
  return (murmur2(Buffer.from(key)) & 0x7fffffff) % partitions;
}

export function createPlatformaticAppender(options: EventLogOptions, physical: (topic: string) => string): KafkaAppender {
  const newProducer = () =>
    new Producer({
      ...platformaticConnection(options),
      serializers: stringSerializers,
      // Idempotent producer: a retried send (a fresh partition's leader settling) cannot write a
      // record twice. Retries are the client's, bounded by appendTimeoutMs here.
      idempotent: true,
      acks: ProduceAcks.ALL,
      partitioner: javaCompatiblePartitioner,
      autocreateTopics: false,
      ...PLATFORMATIC_RETRY,
    });
  let producer: Producer<string, string, string, string> | undefined;
  // A failed or timed-out send replaces the producer: a new producer id
  // starts its sequence numbers afresh, so no sequence of a request of unknown outcome is reused
  // (test/cluster/broker-loss.cluster.test.ts). The old one is closed at once, forcibly: its close
  // ends the client's retries of that request. Left to settle, the retries (about 20 s of them) sent
  // an append already answered 503 once the broker was back, and the partner's retry of it was then
  // written a second time (test/retry-after-503.e2e.test.ts saw the session delivered twice).
  const retirement = producerRetirement();
  return groupCommitAppender(
    options,
    physical,
    {
      async connect() {
        // The client connects on the first send (and initialises its producer id then).
        const p = (producer ??= newProducer());
        return (records) =>
          p.send({
            messages: records.flatMap((t) =>
              t.messages.map((m) => ({
                topic: t.topic,
                key: m.key,
                // A null value is written as Kafka's null (a tombstone): the string serializer gives undefined.
                value: m.value as string,
                headers: m.headers,
              })),
            ),
          });
      },
      discard() {
        const old = producer;
        producer = undefined;
        if (old) retirement.retire(() => old.close(true));
      },
      async close() {
        await Promise.allSettled([producer?.close(), retirement.settled(options.appendTimeoutMs ?? DEFAULT_APPEND_TIMEOUT_MS, translatePlatformaticError)]);
      },
    },
    translatePlatformaticError,
  );
}
