// The driver's side of the store's Database handle. index.ts does not re-export this module: only the
// store's own files see that a Database is a pg Pool, so only the store runs SQL.
import type pg from 'pg';
import type { Database } from './pool.ts';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

/** The pg Pool a Database is (createPool made it one): where the store's factories open the handle. */
export function pgPool(db: Database): Pool {
  return db as unknown as Pool;
}

/** A pg Pool as the opaque handle the store's exported functions take and return. */
export function asDatabase(pool: Pool): Database {
  return pool as unknown as Database;
}

/** Runs fn in a transaction; rolls back on any error. */
export async function inTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const result = await fn(client);
    await client.query('commit');
    return result;
  } catch (e) {
    await client.query('rollback').catch(() => undefined);
    throw e;
  } finally {
    client.release();
  }
}
