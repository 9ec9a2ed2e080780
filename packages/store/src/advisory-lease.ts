import type { AdvisoryLease } from '@hub/core';
import { pgPool, type PoolClient } from './pg-pool.ts';
import type { Database } from './pool.ts';

// A lease among replicas of one service: a session-level Postgres advisory lock held on one dedicated
// connection. One replica at a time holds it; when that replica dies its connection closes, Postgres
// releases the lock, and the next replica that asks takes it. Used where two replicas doing the same
// work would be wrong or wasteful (the prober: one probe per partner per interval).

/** Advisory lock keys in use: the outbox (7_331_002, transaction-scoped), migrations, and these (snapshotLoad: the projector's load of an empty read model, session-scoped). */
export const LEASE_KEYS = { prober: 7_331_003, snapshotLoad: 7_331_004 } as const;

export function advisoryLease(db: Database, key: number, onChange: (held: boolean) => void = () => undefined): AdvisoryLease {
  const pool = pgPool(db);
  let client: PoolClient | undefined;
  let asking: Promise<boolean> | undefined;
  const drop = (c: PoolClient, broken: boolean) => {
    if (client === c) client = undefined;
    c.release(broken);
    onChange(false);
  };
  const ask = async (): Promise<boolean> => {
    if (client) {
      const c = client;
      try {
        await c.query('select 1');
        return true;
      } catch {
        drop(c, true);
        return false;
      }
    }
    const c = await pool.connect();
    try {
      const { rows } = await c.query<{ ok: boolean }>('select pg_try_advisory_lock($1) as ok', [key]);
      if (!rows[0]?.ok) {
        c.release();
        return false;
      }
    } catch (e) {
      c.release(true);
      throw e;
    }
    client = c;
    onChange(true);
    return true;
  };
  return {
    hold() {
      // One question at a time: two concurrent callers would otherwise open two connections.
      asking ??= ask().finally(() => (asking = undefined));
      return asking;
    },
    async release() {
      await asking?.catch(() => undefined);
      const c = client;
      if (!c) return;
      await c.query('select pg_advisory_unlock($1)', [key]).catch(() => undefined);
      drop(c, false);
    },
  };
}

/**
 * Runs fn while holding the session-level advisory lock `key` on a connection of its own: a second
 * caller (another replica) waits until the first is done. For one-off work at start that two replicas
 * must not do at once (the projector's load of an empty read model from its snapshot).
 */
export async function withAdvisoryLock<T>(db: Database, key: number, fn: () => Promise<T>): Promise<T> {
  const pool = pgPool(db);
  const client = await pool.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [key]);
    try {
      return await fn();
    } finally {
      await client.query('select pg_advisory_unlock($1)', [key]);
    }
  } finally {
    client.release();
  }
}
