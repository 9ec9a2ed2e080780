import { failureKindOf } from '@hub/core';
import type { ConsumedRecord, DeliveryPosition, DeliveryStore, RawRecord } from '@hub/core';
import type { Gauge } from '@hub/observability';
import { applyIsolating, type ConsumerWatch, type Item, type ServiceShell } from '@hub/service-kit';
import { postgresPositionBindings } from '@hub/store';

// What the dispatcher's two consumers (delivery-consumer.ts: sessions, CDRs, tokens; registry-consumer.ts:
// ClientInfo and token re-sends) share: records become delivery rows and the partition's position is
// stored with them in one statement, before Kafka's offset is committed (never lost, never applied
// twice). Each partition starts where the stored position says (rows Postgres lost are made again from
// their events; positions of another cluster or topic stop the consumer). A record
// that cannot become rows is quarantined in the same statement; a Postgres failure keeps the partition
// waiting (service-kit, consumerWatch).

export interface RowSubscriptionOptions<T extends { readonly raw: RawRecord }> {
  readonly group: string;
  readonly topics: readonly string[];
  readonly deliveries: Pick<DeliveryStore, 'deliveryPositions'>;
  readonly watch: ConsumerWatch;
  readonly lag: Gauge<'group' | 'topic' | 'partition'>;
  /** Partitions handed off in parallel (each keeps its order). */
  readonly concurrency?: number;
  /** A record as an item: what it is, or why it is quarantined. */
  decode(record: ConsumedRecord): Item<T>;
  /** Writes the rows of a chunk with its position (and its quarantined records) in one statement. */
  apply(chunk: ReadonlyArray<Item<T>>, position: DeliveryPosition): Promise<void>;
  /** The log line of a quarantined record. */
  readonly quarantinedMessage: string;
  /** New rows: wake the delivery workers. */
  wake(): void;
}

export async function subscribeRows<T extends { readonly raw: RawRecord }>(shell: ServiceShell, options: RowSubscriptionOptions<T>): Promise<{ stop(): Promise<void> }> {
  const { logger, eventLog, pool } = shell;
  const { group, watch } = options;
  const bindings = postgresPositionBindings(pool);
  const subscription = await eventLog.subscribe({
    group,
    topics: options.topics,
    positions: {
      load: (topic) => options.deliveries.deliveryPositions(group, topic),
      loadBinding: (topic) => bindings.load(group, topic),
      saveBinding: (topic, binding) => bindings.save(group, topic, binding),
    },
    ...watch.subscriptionHooks(options.lag),
    ...(options.concurrency ? { concurrency: options.concurrency } : {}),
    onBatch: async (batch) => {
      const items = batch.records.map((record) => options.decode(record));
      const outcome = await watch.guard({ topic: batch.topic, partition: batch.partition, firstOffset: batch.firstOffset }, async () => {
        const quarantined = await applyIsolating(
          items,
          async (chunk) => {
            const last = chunk[chunk.length - 1] as Item<T>;
            // Durable hand-off first, offset second: a crash in between re-reads the batch, and the
            // records it applies again are no-ops (same offsets).
            await options.apply(chunk, { consumerGroup: group, topic: batch.topic, partition: batch.partition, nextOffset: (BigInt(last.record.raw.offset) + 1n).toString() });
          },
          failureKindOf,
        );
        watch.quarantined(batch.topic, quarantined.length);
        for (const q of quarantined) logger.error(options.quarantinedMessage, { topic: batch.topic, partition: batch.partition, offset: q.record.raw.offset, reason: q.quarantine?.reason });
      });
      if (!outcome) options.wake();
      return outcome;
    },
  });
  return {
    async stop() {
      watch.stop();
      await subscription.stop();
    },
  };
}
