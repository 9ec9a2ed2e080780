import type { ConsumerConfig } from '@hub/config';
import { Counter, Histogram } from '@hub/observability';
import { projectedModules, topicOf } from '@hub/modules';
import { appendSnapshot, applyIsolating, consumerLagGauge, hasObjectData, consumerWatch, loadSnapshot, startServiceShell, type Item, type ServiceShell } from '@hub/service-kit';
import { LEASE_KEYS, postgresPositionBindings, postgresQuarantineStore, postgresReadModelStore, withAdvisoryLock } from '@hub/store';
import { failureKindOf, decodeRecord, projectedRecord, type ApplyOutcome, type PartitionBatch, type ProjectedRecord, type RawRecord, type ReadModel } from '@hub/core';
import { groupApply } from './group-apply.ts';

// Projector: applies the events of every projected module (locations, tariffs, tokens: the module
// table) to their read models (docs/explanation/reference-design.md, Postgres, exactly-once projection). The batches one fetch brought for its partitions are applied in one
// Postgres transaction with those partitions' positions (group commit); Kafka's committed offset is
// only a hint of where to resume, so a redelivered or replayed record is recognised by its offset and
// skipped. A record the read model cannot store (a data or constraint error) or that is not an event
// is quarantined with the position that moves past it; a failure of Postgres keeps the partition
// waiting (service-kit, poison-proof apply). Each batch's changed objects go to the model's snapshot
// topic before it commits, and a projector that finds its read model empty loads the snapshot first
// and replays only the change topic after it (docs/decisions/0014-snapshot-topics.md).

// Every read model of the module table (@hub/modules, modules.ts), each from its topic.
const MODELS: ReadonlyArray<{ model: ReadModel; topic: string }> = projectedModules.map((model) => ({ model, topic: topicOf(model) }));

/** A record of a topic no read model projects: only a quarantined record re-driven by hand can be one. */
class UnprojectedTopic extends Error {}

type Consumed = { readonly projected: ProjectedRecord; readonly raw: RawRecord; readonly ceId?: string | undefined };

// Long because: the projector's wiring: its metrics, watch, group commits and subscription share the
// shell and the read-model store; each part is short.
export async function startWorker(config: ConsumerConfig, options: { groupId?: string; secretKey?: Buffer; startFrom?: 'snapshot' | 'history' } = {}): Promise<ServiceShell> {
  // The tokens read model holds tokens with their personal fields opened (driver-data-log.ts).
  const shell = await startServiceShell('projector', config, options.secretKey ? { secretKey: options.secretKey } : {});
  const { logger, metrics, eventLog, pool } = shell;
  const store = postgresReadModelStore(pool);
  const events = new Counter({ name: 'hub_projector_events_total', help: 'Events by read model and outcome (applied, skipped, rejected, superseded: older than the object held, quarantined)', labelNames: ['model', 'outcome'], registers: [metrics] });
  const lag = consumerLagGauge(metrics);
  const batchSeconds = new Histogram({ name: 'hub_projector_batch_seconds', help: 'Time to apply one round of batches (one transaction)', labelNames: ['model'], buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5], registers: [metrics] });
  const modelOf = new Map(MODELS.map((m) => [eventLog.physical(m.topic), m.model]));
  const group = options.groupId ?? 'projector';
  // Only the deployment's projector keeps the snapshot (docs/decisions/0014-snapshot-topics.md); a
  // replay from history into another database must not write states of its own into it.
  const keepsSnapshot = options.startFrom !== 'history';
  const watch = consumerWatch({ group, metrics, logger, quarantine: postgresQuarantineStore(pool), stuckAfterMs: config.consumerStuckAfterMs });
  shell.addHealthProblems(() => watch.problems());
  const modelOfTopic = (topic: string): ReadModel | undefined => modelOf.get(topic) ?? modelOf.get(eventLog.physical(topic));
  const requireModel = (topic: string): ReadModel => {
    const model = modelOfTopic(topic);
    if (!model) throw new UnprojectedTopic(`no read model projects topic ${topic}`);
    return model;
  };
  // Re-drives (hubctl quarantine redrive) through the read model's own apply rules; a record of a
  // topic no model projects stays quarantined with that reason.
  watch.startRedrives(
    (q) => {
      const model = requireModel(q.record.topic);
      const event = decodeRecord(q.record);
      // Still undecodable: the store refuses its empty subject, and the record stays quarantined.
      return store.redrive(model, projectedRecord(q.record.offset, hasObjectData(event) ? event : undefined));
    },
    (err) => (err instanceof UnprojectedTopic ? 'record' : failureKindOf(err)),
  );
  // One group commit per read model: the partitions of a fetch are applied in one transaction.
  const groupFor = (model: ReadModel) =>
    groupApply<PartitionBatch, ApplyOutcome>(
      (b) => b.partition,
      async (batches) => {
        const end = batchSeconds.startTimer({ model });
        try {
          return await store.applyBatches(model, batches, undefined, keepsSnapshot ? (changes) => appendSnapshot(eventLog, model, changes, 'projector') : undefined);
        } finally {
          end();
        }
      },
    );
  const count = (model: ReadModel, outcome: ApplyOutcome): void => {
    events.inc({ model, outcome: 'applied' }, outcome.applied);
    events.inc({ model, outcome: 'skipped' }, outcome.skipped);
    events.inc({ model, outcome: 'rejected' }, outcome.rejected);
    events.inc({ model, outcome: 'superseded' }, outcome.superseded);
    events.inc({ model, outcome: 'quarantined' }, outcome.quarantined);
    if (outcome.rejected > 0) logger.warn('events not applicable to the read model were kept as rejects', { model, rejected: outcome.rejected });
    // Newest wins (docs/decisions/0001-newest-state-wins.md): expected when a CPO's updates cross.
    if (outcome.superseded > 0) logger.info('updates older than the objects held were not applied (newest wins); hubctl readmodel rejects lists them', { model, superseded: outcome.superseded });
  };
  const grouped = Object.fromEntries(projectedModules.map((m) => [m, groupFor(m)])) as Record<ReadModel, ReturnType<typeof groupFor>>;
  const bindings = postgresPositionBindings(pool);
  if (keepsSnapshot) await restoreEmptyReadModels(shell);
  const subscription = await eventLog.subscribe({
    group,
    topics: MODELS.map((m) => m.topic),
    // Each partition starts where the read model stands (records already applied are skipped anyway),
    // once those positions are known to belong to the current topics.
    positions: {
      load: async (topic) => store.positions(requireModel(topic)),
      loadBinding: (topic) => bindings.load(group, topic),
      saveBinding: (topic, binding) => bindings.save(group, topic, binding),
    },
    ...watch.subscriptionHooks(lag),
    // The partitions of a fetch side by side (up to 32; infra/topics.json has 15 for the three models):
    // their batches meet in one group commit. Objects never span partitions, so order is kept. The
    // next fetch waits until they are applied, so the projector holds one fetch decoded at a time,
    // bounded by the event log's fetch limits (4 MiB; @hub/event-log fetch-limits.ts).
    concurrency: 32,
    onBatch: async (batch) => {
      const model = modelOfTopic(batch.topic);
      if (!model) return;
      const items: Array<Item<Consumed>> = batch.records.map((record) => {
        const readable = hasObjectData(record.event) ? record.event : undefined;
        const consumed = { projected: projectedRecord(record.offset, readable), raw: record, ceId: record.event?.id };
        return readable ? { record: consumed } : { record: consumed, quarantine: { failure: 'undecodable', reason: 'not an event of the hub (CloudEvents binary mode with a JSON object as data)' } };
      });
      return watch.guard({ topic: batch.topic, partition: batch.partition, firstOffset: batch.firstOffset }, async () => {
        const quarantined = await applyIsolating(
          items,
          async (chunk) => {
            const records = chunk.map(({ record: { projected, raw, ceId }, quarantine }) =>
              quarantine ? { ...projected, quarantine: { consumerGroup: group, record: raw, ceType: quarantine.failure === 'record' ? projected.type : undefined, ceId, failureKind: quarantine.failure, reason: quarantine.reason } } : projected,
            );
            count(model, await grouped[model].submit({ partition: batch.partition, records }));
          },
          failureKindOf,
        );
        watch.quarantined(batch.topic, quarantined.length);
        for (const q of quarantined) logger.error('record quarantined: the read model cannot apply it', { model, partition: batch.partition, offset: q.record.raw.offset, reason: q.quarantine?.reason });
      });
    },
  });
  logger.info('projector running', { operatorPort: shell.operator.port, models: MODELS.map((m) => m.model) });
  return {
    ...shell,
    async stop() {
      watch.stop();
      await subscription.stop();
      await shell.stop();
    },
  };
}

/**
 * A read model with no positions at all (a new database, a restore that lost it) is loaded from its
 * snapshot topic before the change topics are consumed, so the projector replays only their tail.
 * Under an advisory lock: a second instance waits, then finds positions and skips.
 */
async function restoreEmptyReadModels(shell: ServiceShell): Promise<void> {
  const { pool, eventLog, logger } = shell;
  const store = postgresReadModelStore(pool);
  await withAdvisoryLock(pool, LEASE_KEYS.snapshotLoad, async () => {
    for (const { model } of MODELS) {
      if ((await store.positions(model)).size > 0) continue;
      const loaded = await loadSnapshot({ eventLog, store }, model, await store.activeGeneration(model));
      if (loaded.records > 0) logger.info('read model loaded from its snapshot topic', { model, records: loaded.records, seconds: loaded.seconds });
    }
  });
}
