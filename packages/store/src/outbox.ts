import type { HubEvent } from '@hub/events';
import { inTransaction, pgPool } from './pg-pool.ts';
import type { Database } from './pool.ts';

// Publishes registry_outbox rows in id order. A transaction-scoped advisory lock lets exactly one
// drainer run at a time (hubctl, an ingress replica, or the prober's periodic relay), so the registry
// topic receives events in the order Postgres committed them. A row is marked published only after
// Kafka acknowledged it; a crash in between re-publishes it (consumers dedupe by ce_id).
const OUTBOX_LOCK = 7_331_002;

export type PublishBatch = (batch: ReadonlyArray<{ topic: string; event: HubEvent }>) => Promise<void>;

export async function drainOutbox(db: Database, publish: PublishBatch, batchSize = 200): Promise<number> {
  const pool = pgPool(db);
  let published = 0;
  for (;;) {
    const n = await inTransaction(pool, async (client) => {
      const locked = await client.query<{ ok: boolean }>('select pg_try_advisory_xact_lock($1) as ok', [OUTBOX_LOCK]);
      if (!locked.rows[0]?.ok) return -1;
      const { rows } = await client.query<{ id: string; topic: string; event: HubEvent }>(
        'select id, topic, event from registry_outbox where published_at is null order by id limit $1',
        [batchSize],
      );
      if (rows.length === 0) return 0;
      await publish(rows.map((r) => ({ topic: r.topic, event: r.event })));
      await client.query('update registry_outbox set published_at = now() where id = any($1::bigint[])', [rows.map((r) => r.id)]);
      return rows.length;
    });
    if (n <= 0) return published;
    published += n;
  }
}

export async function pendingOutbox(db: Database): Promise<number> {
  const pool = pgPool(db);
  const { rows } = await pool.query<{ n: string }>('select count(*) as n from registry_outbox where published_at is null');
  return Number(rows[0]?.n ?? 0);
}
