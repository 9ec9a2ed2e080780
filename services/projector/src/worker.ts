import type { CommonConfig } from '@hub/config';
import { topics } from '@hub/events';
import { Counter, Histogram } from '@hub/observability';
import { consumerLagGauge, seekToStoredPositions, startServiceShell, type ServiceShell } from '@hub/service-kit';
import { postgresReadModelStore, projectedRecord, type BatchOutcome, type PartitionBatch, type ReadModel } from '@hub/store';
import { groupApply } from './group-apply.ts';

// Projector: applies location and tariff events to their read models (reference design, Postgres,
// exactly-once projection). The batches one fetch brought for its partitions are applied in one
// Postgres transaction with those partitions' positions (group commit); Kafka's committed offset is
// only a hint of where to resume, so a redelivered or replayed record is recognised by its offset and
// skipped.

const MODELS: ReadonlyArray<{ model: ReadModel; topic: string }> = [
  { model: 'locations', topic: topics.locations },
  { model: 'tariffs', topic: topics.tariffs },
];

export async function startWorker(config: CommonConfig, options: { groupId?: string } = {}): Promise<ServiceShell> {
  const shell = await startServiceShell('projector', config);
  const { logger, metrics, eventLog, pool } = shell;
  const store = postgresReadModelStore(pool);
  const events = new Counter({ name: 'hub_projector_events_total', help: 'Events by read model and outcome (applied, skipped, rejected)', labelNames: ['model', 'outcome'], registers: [metrics] });
  const lag = consumerLagGauge(metrics);
  const batchSeconds = new Histogram({ name: 'hub_projector_batch_seconds', help: 'Time to apply one round of batches (one transaction)', labelNames: ['model'], buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5], registers: [metrics] });
  const modelOf = new Map(MODELS.map((m) => [eventLog.physical(m.topic), m.model]));
  const group = options.groupId ?? 'projector';
  const consumer = eventLog.consumer(group);
  await consumer.connect();
  for (const m of MODELS) await consumer.subscribe({ topic: eventLog.physical(m.topic), fromBeginning: true });
  // Each partition starts where the read model stands (records already applied are skipped anyway).
  seekToStoredPositions(consumer, logger, (topic) => {
    const model = modelOf.get(topic);
    return model ? store.positions(model) : undefined;
  });
  // One group commit per read model: the partitions of a fetch are applied in one transaction.
  const groupFor = (model: ReadModel) =>
    groupApply<PartitionBatch, BatchOutcome>(
      (b) => b.partition,
      async (batches) => {
        const end = batchSeconds.startTimer({ model });
        try {
          return await store.applyBatches(model, batches);
        } finally {
          end();
        }
      },
    );
  const grouped: Record<ReadModel, ReturnType<typeof groupFor>> = { locations: groupFor('locations'), tariffs: groupFor('tariffs') };
  await consumer.run({
    eachBatchAutoResolve: false,
    // The partitions of a fetch side by side (up to 32; infra/topics.json has 9 for the two models):
    // their batches meet in one group commit. Objects never span partitions, so order is kept.
    partitionsConsumedConcurrently: 32,
    eachBatch: async (payload) => {
      const { batch } = payload;
      const model = modelOf.get(batch.topic);
      if (!model || batch.messages.length === 0 || !payload.isRunning() || payload.isStale()) return;
      const records = batch.messages.map((message) => projectedRecord(message.offset, eventLog.decode(batch.topic, batch.partition, message)?.event));
      const outcome = await grouped[model].submit({ partition: batch.partition, records });
      events.inc({ model, outcome: 'applied' }, outcome.applied);
      events.inc({ model, outcome: 'skipped' }, outcome.skipped);
      events.inc({ model, outcome: 'rejected' }, outcome.rejected);
      if (outcome.rejected > 0) logger.warn('events not applicable to the read model were kept as rejects', { model, partition: batch.partition, rejected: outcome.rejected });
      payload.resolveOffset(batch.lastOffset());
      lag.set({ group, topic: batch.topic, partition: String(batch.partition) }, Number(batch.offsetLag()));
      await payload.commitOffsetsIfNecessary();
      await payload.heartbeat();
    },
  });
  logger.info('projector running', { operatorPort: shell.operator.port, models: MODELS.map((m) => m.model) });
  return {
    ...shell,
    async stop() {
      await consumer.disconnect();
      await shell.stop();
    },
  };
}
