import { kindsWhere } from '@hub/modules';
import { pgPool } from './pg-pool.ts';
import type { Database } from './pool.ts';

// Retention (docs/decisions/0006-retention.md): rows whose work is done are deleted once they are
// older than their table's retention, so the tables of a hub that runs for years level off. The
// prober's active replica runs it. Each batch is one short statement over at most `batchRows` rows,
// found through an index that holds only prunable rows (migration 022) and taken with SKIP LOCKED, so
// it never waits for a row a claim or an update holds and never holds a lock for long.

/** How long done rows are kept, in milliseconds, by what they are. */
export interface RetentionPolicy {
  /** Sessions, CDRs and command results after their delivery (token and ClientInfo rows stay: they are what a recipient holds). */
  readonly deliveredMs: number;
  /** Commands no longer waiting for a result (rejected, answered, timed out, or never forwarded). */
  readonly finishedCommandsMs: number;
  /** Quarantined records an operator resolved (re-driven, superseded or discarded). */
  readonly resolvedQuarantineMs: number;
  /** Events the read models did not apply (not applicable, or superseded: newest wins). */
  readonly projectionRejectsMs: number;
}

export const DEFAULT_RETENTION: RetentionPolicy = Object.freeze({
  deliveredMs: 30 * 86_400_000,
  finishedCommandsMs: 30 * 86_400_000,
  resolvedQuarantineMs: 90 * 86_400_000,
  projectionRejectsMs: 30 * 86_400_000,
});

/** A rate-limit window is needed for its minute only; a few are kept for inspection. */
const RATE_LIMIT_WINDOWS_MS = 10 * 60_000;

export type PrunedTable = 'deliveries' | 'commands' | 'consumer_quarantine' | 'projection_rejects' | 'rate_limit_windows';

/**
 * Each table's batch: the rows older than the cutoff ($1), oldest first, at most $2, skipping locked
 * ones. The predicates repeat those of the partial indexes of migration 022, so each batch reads the
 * index, not the table.
 */
/**
 * The delivered rows retention deletes: the kinds whose rule says so (DeliveryRule.prunedWhenDelivered).
 * The same predicate as migration 022's partial index, text for text, or the planner cannot use it
 * (a unit test compares them: a kind that becomes pruned needs its migration).
 */
export const PRUNED_DELIVERIES = `state = 'delivered' and kind in (${kindsWhere((rule) => rule.prunedWhenDelivered === true)})`;

const BATCH_SQL: Record<PrunedTable, string> = {
  deliveries: `delete from deliveries where id in (
      select id from deliveries
       where ${PRUNED_DELIVERIES} and delivered_at < $1
       order by delivered_at, id limit $2 for update skip locked)`,
  commands: `delete from commands where id in (
      select id from commands where state <> 'accepted' and updated_at < $1 order by updated_at, id limit $2 for update skip locked)`,
  consumer_quarantine: `delete from consumer_quarantine where id in (
      select id from consumer_quarantine
       where state in ('redriven', 'superseded', 'discarded') and resolved_at < $1
       order by resolved_at, id limit $2 for update skip locked)`,
  projection_rejects: `delete from projection_rejects where ctid in (
      select ctid from projection_rejects where at < $1 order by at limit $2 for update skip locked)`,
  rate_limit_windows: `delete from rate_limit_windows where ctid in (
      select ctid from rate_limit_windows where window_start < $1 order by window_start limit $2 for update skip locked)`,
};

export interface PruneOptions {
  /** What "now" is: the clock, or a simulated day (bench/retention.bench.ts makes a month pass). */
  readonly now?: Date;
  readonly batchRows?: number;
  /** At most this many rows per table and run: a backlog is worked off over several runs. */
  readonly maxRowsPerTable?: number;
  /** Pause between batches, so pruning yields to the hub's own statements. */
  readonly pauseMs?: number;
}

/** One pruning run over every table; how many rows each lost. */
export async function pruneExpired(db: Database, policy: RetentionPolicy, options: PruneOptions = {}): Promise<Record<PrunedTable, number>> {
  const pool = pgPool(db);
  const now = (options.now ?? new Date()).getTime();
  const batchRows = options.batchRows ?? 1000;
  const maxRows = options.maxRowsPerTable ?? 100_000;
  const cutoffs: Record<PrunedTable, number> = {
    deliveries: policy.deliveredMs,
    commands: policy.finishedCommandsMs,
    consumer_quarantine: policy.resolvedQuarantineMs,
    projection_rejects: policy.projectionRejectsMs,
    rate_limit_windows: RATE_LIMIT_WINDOWS_MS,
  };
  const pruned = { deliveries: 0, commands: 0, consumer_quarantine: 0, projection_rejects: 0, rate_limit_windows: 0 };
  for (const table of Object.keys(BATCH_SQL) as PrunedTable[]) {
    const cutoff = new Date(now - cutoffs[table]);
    while (pruned[table] < maxRows) {
      const { rowCount } = await pool.query(BATCH_SQL[table], [cutoff, Math.min(batchRows, maxRows - pruned[table])]);
      pruned[table] += rowCount ?? 0;
      if ((rowCount ?? 0) < batchRows) break;
      if (options.pauseMs) await new Promise((r) => setTimeout(r, options.pauseMs));
    }
  }
  return pruned;
}
