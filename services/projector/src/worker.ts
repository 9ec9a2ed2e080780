import type { ConsumerConfig } from '@hub/config';
import { topics } from '@hub/events';
import { Counter, Histogram } from '@hub/observability';
import { applyIsolating, consumerLagGauge, hasObjectData, consumerWatch, rawRecord, seekToStoredPositions, startServiceShell, type Item, type ServiceShell } from '@hub/service-kit';
import {
  postgresFailureKind,
  postgresQuarantineStore,
  postgresReadModelStore,
  projectedRecord,
  type BatchOutcome,
  type PartitionBatch,
  type ProjectedRecord,
  type RawRecord,
  type ReadModel,
} from '@hub/store';
import { groupApply } from './group-apply.ts';

// Projector: applies location and tariff events to their read models (reference design, Postgres,
// exactly-once projection). The batches one fetch brought for its partitions are applied in one
// Postgres transaction with those partitions' positions (group commit); Kafka's committed offset is
// only a hint of where to resume, so a redelivered or replayed record is recognised by its offset and
// skipped. A record the read model cannot store (a data or constraint error) or that is not an event
// is quarantined with the position that moves past it; a failure of Postgres keeps the partition
// waiting (service-kit, poison-proof apply).

const MODELS: ReadonlyArray<{ model: ReadModel; topic: string }> = [
  { model: 'locations', topic: topics.locations },
  { model: 'tariffs', topic: topics.tariffs },
];

type Consumed = { readonly projected: ProjectedRecord; readonly raw: RawRecord; readonly ceId?: string | undefined };

export async function startWorker(config: ConsumerConfig, options: { groupId?: string } = {}): Promise<ServiceShell> {
  const shell = await startServiceShell('projector', config);
  const { logger, metrics, eventLog, pool } = shell;
  const store = postgresReadModelStore(pool);
  const events = new Counter({ name: 'hub_projector_events_total', help: 'Events by read model and outcome (applied, skipped, rejected, quarantined)', labelNames: ['model', 'outcome'], registers: [metrics] });
  const lag = consumerLagGauge(metrics);
  const batchSeconds = new Histogram({ name: 'hub_projector_batch_seconds', help: 'Time to apply one round of batches (one transaction)', labelNames: ['model'], buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5], registers: [metrics] });
  const modelOf = new Map(MODELS.map((m) => [eventLog.physical(m.topic), m.model]));
  const group = options.groupId ?? 'projector';
  const watch = consumerWatch({ group, metrics, logger, quarantine: postgresQuarantineStore(pool), stuckAfterMs: config.consumerStuckAfterMs });
  shell.addHealthProblems(() => watch.problems());
  const modelOfTopic = (topic: string): ReadModel | undefined => modelOf.get(topic) ?? modelOf.get(eventLog.physical(topic));
  // Re-drives (hubctl quarantine redrive) through the read model's own apply rules.
  watch.startRedrives((q) => {
    const model = modelOfTopic(q.record.topic) ?? 'locations';
    const decoded = eventLog.decode(q.record.topic, q.record.partition, { ...q.record, timestamp: '0', attributes: 0 });
    // Still undecodable: the store refuses its empty subject, and the record stays quarantined.
    return store.redrive(model, projectedRecord(q.record.offset, hasObjectData(decoded?.event) ? decoded?.event : undefined));
  }, postgresFailureKind);
  const consumer = eventLog.consumer(group);
  await consumer.connect();
  for (const m of MODELS) await consumer.subscribe({ topic: eventLog.physical(m.topic), fromBeginning: true });
  // Each partition starts where the read model stands (records already applied are skipped anyway).
  consumer.on(consumer.events.GROUP_JOIN, (e) => watch.assigned(e.payload.memberAssignment));
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
  const count = (model: ReadModel, outcome: BatchOutcome): void => {
    events.inc({ model, outcome: 'applied' }, outcome.applied);
    events.inc({ model, outcome: 'skipped' }, outcome.skipped);
    events.inc({ model, outcome: 'rejected' }, outcome.rejected);
    events.inc({ model, outcome: 'quarantined' }, outcome.quarantined);
    if (outcome.rejected > 0) logger.warn('events not applicable to the read model were kept as rejects', { model, rejected: outcome.rejected });
  };
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
      const items: Array<Item<Consumed>> = batch.messages.map((message) => {
        const decoded = eventLog.decode(batch.topic, batch.partition, message);
        const readable = decoded && hasObjectData(decoded.event) ? decoded : undefined;
        const consumed = { projected: projectedRecord(message.offset, readable?.event), raw: rawRecord(batch.topic, batch.partition, message), ceId: decoded?.event.id };
        return readable ? { record: consumed } : { record: consumed, quarantine: { failure: 'undecodable', reason: 'not an event of the hub (CloudEvents binary mode with a JSON object as data)' } };
      });
      const done = await watch.guard({ topic: batch.topic, partition: batch.partition, firstOffset: batch.firstOffset() ?? '0' }, () => payload.pause(), async () => {
        const quarantined = await applyIsolating(
          items,
          async (chunk) => {
            const records = chunk.map(({ record: { projected, raw, ceId }, quarantine }) =>
              quarantine ? { ...projected, quarantine: { consumerGroup: group, record: raw, ceType: quarantine.failure === 'record' ? projected.type : undefined, ceId, failureKind: quarantine.failure, reason: quarantine.reason } } : projected,
            );
            count(model, await grouped[model].submit({ partition: batch.partition, records }));
          },
          postgresFailureKind,
        );
        watch.quarantined(batch.topic, quarantined.length);
        for (const q of quarantined) logger.error('record quarantined: the read model cannot apply it', { model, partition: batch.partition, offset: q.record.raw.offset, reason: q.quarantine?.reason });
      });
      if (!done) return;
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
      watch.stop();
      await consumer.disconnect();
      await shell.stop();
    },
  };
}
