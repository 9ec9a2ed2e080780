import pg from 'pg';
import { settleWithin } from '@hub/core';
import { translatePostgresError } from './postgres-failure.ts';
import { asDatabase, pgPool, type PoolClient } from './pg-pool.ts';

declare const database: unique symbol;

/**
 * The hub's Postgres, as the store's factories take it: opaque outside this package, so only the store
 * runs SQL (a caller cannot reach the driver's query or connect, and the driver's types stay in the
 * adapter). At run time it is the pg Pool createPool made; its owner ends it at shutdown.
 */
export interface Database {
  readonly [database]: true;
  /** Closes every connection (at shutdown). */
  end(): Promise<void>;
}

export interface PoolOptions {
  readonly max?: number;
  readonly application?: string;
  readonly asyncCommit?: boolean;
  /**
   * An idle pooled connection failed (Postgres restarted, the connection was terminated). The pool
   * drops it and opens a new one when needed; without a listener the error would end the process.
   */
  readonly onIdleError: (e: Error) => void;
}

export function createPool(databaseUrl: string, options: PoolOptions): Database {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    // Room for sorting a page in memory when the planner cannot walk the page index. UTC: an OCPI
    // DateTime without a zone designator is UTC (types.asciidoc, DateTime), whatever the server's
    // time zone. asyncCommit: commits do not wait for the WAL flush (only for data whose last
    // milliseconds may be lost). No JIT and no parallel workers: the hub's queries are short, and a
    // plan the planner thinks costly (a claim at a backlog of a million rows, a page deep in 500k
    // locations) paid 0.3-1 s of LLVM compilation, or was planned as a parallel walk of every row
    // where one index range held the answer (EXPLAIN ANALYZE).
    options: `-c work_mem=16MB -c timezone=UTC -c jit=off -c max_parallel_workers_per_gather=0${options.asyncCommit ? ' -c synchronous_commit=off' : ''}`,
    max: options.max ?? 10,
    application_name: options.application ?? 'ocpi-hub',
    idleTimeoutMillis: 30_000,
  });
  pool.on('error', options.onIdleError);
  // A connection that ends while a query is in flight fails that query (the caller answers 503), but
  // pg then also emits 'error' on the checked-out client, which has no listener of its own: without
  // this one the process would crash (seen when Postgres went away under load).
  // Once per connection, nothing per query.
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    translateRejections(client, 'query');
  });
  translateRejections(pool, 'query');
  translateRejections(pool, 'connect');
  return asDatabase(pool);
}

/**
 * The store is the Postgres adapter: a failure of Postgres leaves it as DependencyUnavailable, so no
 * caller above it (the ingress's error middleware, consumers) classifies driver errors.
 * Only the promise forms are wrapped (pg's pool calls its clients with callbacks); data and
 * constraint errors pass unchanged, with their SQLSTATE.
 */
function translateRejections<T extends object, K extends keyof T & string>(target: T, method: K): void {
  const original = (target[method] as (...args: unknown[]) => unknown).bind(target);
  (target as Record<string, unknown>)[method] = (...args: unknown[]): unknown => {
    const result = original(...args);
    return result instanceof Promise
      ? result.catch((e: unknown) => {
          throw translatePostgresError(e);
        })
      : result;
  };
}

/** Creates the database named in the URL when the server has no such database yet. */
export async function ensureDatabase(databaseUrl: string): Promise<'created' | 'exists'> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new Error(`unsupported database name "${name}"`);
  const probe = new pg.Client({ connectionString: databaseUrl });
  try {
    await probe.connect();
    return 'exists';
  } catch (e) {
    if ((e as { code?: string }).code !== '3D000') throw e;
  } finally {
    await probe.end().catch(() => undefined);
  }
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    await admin.query(`create database "${name}"`);
  } catch (e) {
    if ((e as { code?: string }).code !== '42P04') throw e; // created concurrently
  } finally {
    await admin.end();
  }
  return 'created';
}

/** Drops a database (tests only create and drop their own). */
export async function dropDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    await admin.query(`drop database if exists "${name}" with (force)`);
  } finally {
    await admin.end();
  }
}

/** LISTEN on a channel with a dedicated connection; notifications call onNotify. */
export async function listen(databaseUrl: string, channel: string, onNotify: () => void, onError: (e: unknown) => void): Promise<{ close(): Promise<void> }> {
  if (!/^[a-z_]+$/.test(channel)) throw new Error(`bad channel name ${channel}`);
  const client = new pg.Client({ connectionString: databaseUrl, application_name: `ocpi-hub-listen-${channel}` });
  client.on('notification', onNotify);
  client.on('error', onError);
  await client.connect();
  await client.query(`listen ${channel}`);
  return { close: () => client.end().catch(() => undefined) };
}

/** Whether Postgres answers a query now (a health check): never throws. */
export function databaseReachable(db: Database): Promise<boolean> {
  return pgPool(db).query('select 1').then(
    () => true,
    () => false,
  );
}

/**
 * The pool with its promise calls (query, connect) run through `run` (a caller's circuit breaker) and
 * bounded by timeoutMs: pg's pool has no deadline of its own, so without the bound a hung Postgres would
 * hold a request for good. A connection that arrives after its caller gave up is destroyed, so the pool
 * does not lose it. The callback forms pass unchanged, and the pool itself is not changed: code that
 * must not be refused (the health check, the background outbox relay, a port guarded call by call)
 * keeps using it, so a guarded call never runs inside another one (the probe would refuse itself).
 */
export function guardedPool(db: Database, run: <T>(work: () => Promise<T>) => Promise<T>, timeoutMs: number): Database {
  const pool = pgPool(db);
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  const connect = pool.connect.bind(pool) as (...args: unknown[]) => unknown;
  const guarded: Record<string, unknown> = {
    query: (...args: unknown[]): unknown => {
      if (typeof args.at(-1) === 'function') return query(...args);
      return run(() => settleWithin('postgres', 'a query', timeoutMs, query(...args) as Promise<unknown>));
    },
    connect: (...args: unknown[]): unknown => {
      if (typeof args.at(-1) === 'function') return connect(...args);
      return run(() => settleWithin('postgres', 'a connection request', timeoutMs, connect() as Promise<PoolClient>, (client) => client.release(true)));
    },
  };
  return asDatabase(new Proxy(pool, {
    get(target, prop, receiver) {
      if (typeof prop === 'string' && prop in guarded) return guarded[prop];
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  }));
}
