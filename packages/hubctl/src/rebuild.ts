import { failureKindOf, projectedRecord, type ConsumedRecord, type EventLog, type PositionBindingStore, type ProjectedRecord, type ReadModel, type ReadModelStore, type StoredPositions } from '@hub/core';
import { topicOf } from '@hub/modules';
import { applyIsolating, hasObjectData, loadSnapshot, type Item } from '@hub/service-kit';
import { applyPipeline } from './apply-pipeline.ts';

// Rebuild of a read model while the old one keeps serving (Projector): a new generation is loaded
// from the model's snapshot topic (the live objects, docs/decisions/0014-snapshot-topics.md), then
// filled with the change topic's records after the offsets the snapshot reflects by a consumer of its
// own, then made active in one transaction once it holds at least everything the live projection holds.

export interface RebuildProgress {
  readonly applied: bigint;
  readonly target: bigint;
  readonly eventsPerSecond: number;
}

export interface RebuildResult {
  readonly model: ReadModel;
  readonly generation: number;
  readonly events: bigint;
  readonly rows: number;
  readonly seconds: number;
  readonly eventsPerSecond: number;
  /** Snapshot records loaded (0 when rebuilt from the change topic's history alone). */
  readonly snapshotRecords: number;
  readonly snapshotSeconds: number;
}

export interface RebuildOptions {
  /**
   * 'history': from the change topic's first record, ignoring the snapshot (it needs the whole
   * history: only while retention has deleted nothing). Default 'snapshot'.
   */
  readonly from?: 'snapshot' | 'history';
  readonly switchTimeoutMs?: number;
  /** Fetch size per partition (a fetch brings four): about 500 locations a batch keeps transactions large. */
  readonly fetchBytesPerPartition?: number;
  /** Transactions applying at once (the read-model tables' writers besides the live projector). */
  readonly applyConcurrency?: number;
  /**
   * Bytes (as fetched) of the batches decoded and waiting for or in a transaction before fetching
   * pauses: what the rebuild holds is a few times this (decoded objects), plus one fetch.
   */
  readonly heldBytes?: number;
  /**
   * The consumer group its quarantined records are filed under: the live projector's, so a record
   * both quarantine is listed once and re-driven (into the active generation) by the projector.
   */
  readonly quarantineGroup?: string;
  /**
   * hubctl positions reset: the live projection's positions belong to another cluster or topic, so
   * the new generation replaces it without catching up with it, and the positions are bound anew.
   */
  readonly reset?: boolean;
}

/** The live projection's positions as the event log checks them. */
export function projectorPositions(store: ReadModelStore, bindings: PositionBindingStore, model: ReadModel, group: string): StoredPositions {
  return {
    load: () => store.positions(model),
    loadBinding: (topic) => bindings.load(group, topic),
    saveBinding: (topic, binding) => bindings.save(group, topic, binding),
  };
}

// Long because: a rebuild's steps in order (check positions, snapshot, tail, switch over, maintain);
// the tail's batch handler, statistics refresh and failure share the rebuild's state.
export async function rebuildReadModel(
  deps: { eventLog: EventLog; store: ReadModelStore; bindings?: PositionBindingStore | undefined },
  model: ReadModel,
  onProgress: (p: RebuildProgress) => void,
  options: RebuildOptions = {},
): Promise<RebuildResult> {
  const started = Date.now();
  const topic = topicOf(model);
  const quarantineGroup = options.quarantineGroup ?? 'projector';
  const live = deps.bindings ? projectorPositions(deps.store, deps.bindings, model, quarantineGroup) : undefined;
  // A rebuild would wait forever to catch up with positions of another topic: refuse, naming the fix.
  const mismatches = options.reset || !live ? [] : await deps.eventLog.verifyPositions([topic], live);
  if (mismatches.length > 0) throw new PositionsMismatchError(quarantineGroup, mismatches.map((m) => `${m.topic}: ${m.reason}`).join('; '));
  const { building } = await deps.store.beginRebuild(model);
  const snapshot = options.from === 'history' ? { records: 0, seconds: 0 } : await loadSnapshot(deps, model, building, options.fetchBytesPerPartition ? { fetchBytesPerPartition: options.fetchBytesPerPartition } : {});
  // The tail's batches look up the objects they build on by key: statistics that know the loaded rows.
  if (snapshot.records > 0) await deps.store.analyze(model);
  const target = await deps.eventLog.latestOffsets(topic);
  const targetTotal = [...target.values()].reduce((a, b) => a + b, 0n);
  const applied = async () => [...(await deps.store.positions(model, building)).values()].reduce((a, b) => a + b, 0n);

  const groupId = `rebuild-${model}-g${building}-${Date.now()}`;
  const state: { failure?: Error } = {};
  const rethrow = (): void => {
    if (state.failure) throw state.failure;
  };
  // Fetching and decoding overlap with applying: each partition's batches are applied in order on a
  // chain of their own, at most `applyConcurrency` transactions at once, while the event log fetches ahead.
  // The batches held are bounded in bytes (apply-pipeline.ts), so memory stays bounded however far
  // behind Postgres is; batches are handed over one at a time (concurrency 1
  // below), so at most one more is decoded while it waits for room.
  const pipeline = applyPipeline(options.applyConcurrency ?? 3, options.heldBytes ?? 6 * 1024 * 1024, (e) => {
    state.failure ??= e;
  });
  // Like after any bulk load, the new generation's statistics are refreshed as it grows (at 1,000
  // events applied, then each time the count quadruples), so batches that build on stored objects
  // (PATCHes) look them up by primary key instead of scanning the generation.
  let appliedSinceStart = 0;
  let analyzeAt = 1000;
  let analyzing: Promise<void> | undefined;
  const refreshStatistics = (count: number): void => {
    appliedSinceStart += count;
    if (appliedSinceStart < analyzeAt || analyzing) return;
    analyzeAt = appliedSinceStart * 4;
    analyzing = deps.store
      .analyze(model)
      .catch(() => undefined)
      .finally(() => {
        analyzing = undefined;
      });
  };
  // The rebuild's own one-off group reads the topic from where the snapshot leaves it (its start for a
  // partition the snapshot has nothing of).
  const subscription = await deps.eventLog.subscribe({
    group: groupId,
    topics: [topic],
    ephemeral: true,
    positions: { load: () => deps.store.positions(model, building) },
    concurrency: 1,
    maxBytesPerPartition: options.fetchBytesPerPartition ?? 1024 * 1024,
    onBatch: async (batch) => {
      rethrow();
      // As the projector does (service-kit, poison-proof apply): a record the read model cannot store
      // is quarantined with the position; a failure of Postgres ends the rebuild (the old generation
      // keeps serving; run it again).
      const items: Array<Item<ConsumedRecord> & { projected: ProjectedRecord }> = batch.records.map((record) => {
        const event = hasObjectData(record.event) ? record.event : undefined;
        const projected = projectedRecord(record.offset, event);
        return event ? { record, projected } : { record, projected, quarantine: { failure: 'undecodable', reason: 'not an event of the hub (CloudEvents binary mode with JSON data)' } };
      });
      const bytes = batch.records.reduce((n, r) => n + (r.value?.length ?? 0) + (r.key?.length ?? 0), 0);
      await pipeline.enqueue(batch.partition, bytes, async () => {
        const projectedOf = new Map(items.map((i) => [i.record, i.projected]));
        await applyIsolating<ConsumedRecord>(
          items,
          async (chunk) => {
            const records = chunk.map(({ record, quarantine }) => {
              const projected = projectedOf.get(record) as ProjectedRecord;
              return quarantine
                ? { ...projected, quarantine: { consumerGroup: quarantineGroup, record: record, ceType: quarantine.failure === 'record' ? projected.type : undefined, failureKind: quarantine.failure, reason: quarantine.reason } }
                : projected;
            });
            await deps.store.applyBatch(model, batch.partition, records, building);
          },
          failureKindOf,
        );
        refreshStatistics(items.length);
      });
    },
  });

  try {
    // Fill up to the head as it was at the start, reporting progress.
    for (;;) {
      rethrow();
      const done = await applied();
      const seconds = (Date.now() - started) / 1000;
      onProgress({ applied: done, target: targetTotal, eventsPerSecond: seconds > 0 ? Number(done) / seconds : 0 });
      if (done >= targetTotal) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    // Live traffic kept arriving meanwhile: switch as soon as the new generation is not behind.
    const deadline = Date.now() + (options.switchTimeoutMs ?? 120_000);
    while (!(await deps.store.switchOver(model, building, { force: options.reset === true }))) {
      rethrow();
      if (Date.now() > deadline) throw new Error('the rebuild could not catch up with the live projection in time; the old read model keeps serving');
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await subscription.stop();
    await pipeline.drain();
    await analyzing;
  }
  // The live projection now stands on the current topic: bind its positions to it.
  if (options.reset && live) await deps.eventLog.verifyPositions([topic], live, { rebind: true });
  const events = await applied();
  const seconds = (Date.now() - started) / 1000;
  // The old generation is no longer served: drop its rows, reclaim the space, refresh statistics.
  await deps.store.maintain(model);
  return { model, generation: building, events, rows: await deps.store.counts(model, building), seconds, eventsPerSecond: Number(events) / Math.max(seconds, 0.001), snapshotRecords: snapshot.records, snapshotSeconds: snapshot.seconds };
}

/** Stored positions that do not belong to the current topics; the fix is hubctl positions reset. */
export class PositionsMismatchError extends Error {
  constructor(group: string, reasons: string) {
    super(`the positions of consumer ${group} do not belong to the current topics (${reasons}): run hubctl positions reset --consumer ${group.startsWith('projector') ? 'projector' : 'dispatcher'}`);
    this.name = 'PositionsMismatchError';
  }
}

/** A one-line progress bar for a terminal (carriage return, no newline). */
export function progressBar(p: RebuildProgress, width = 30): string {
  const ratio = p.target === 0n ? 1 : Number(p.applied) / Number(p.target);
  const filled = Math.min(width, Math.round(ratio * width));
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(ratio * 100).toFixed(0).padStart(3)}% ${p.applied}/${p.target} events, ${p.eventsPerSecond.toFixed(0)} ev/s`;
}
