// The hub's Postgres sessions (createPool): settings every query of the hub relies on, the health
// check, and the guarded pool the ingress answers pushes with (a deadline and its circuit breaker).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DependencyUnavailable } from '@hub/core';
import { createPool, databaseReachable, guardedPool } from '@hub/store';
import { givenTestStack, sqlPool } from '@hub/testing';

describe('Postgres pool', () => {
  const given = givenTestStack('pool_settings');

  it('runs without JIT compilation or parallel workers, in UTC (JIT cost a deep page or a large claim 0.3-1 s)', async () => {
    const pool = sqlPool(createPool(given.stack.databaseUrl, { onIdleError: () => undefined }));
    try {
      const { rows } = await pool.query<{ jit: string; workers: string; zone: string }>("select current_setting('jit') as jit, current_setting('max_parallel_workers_per_gather') as workers, current_setting('timezone') as zone");
      assert.deepEqual(rows[0], { jit: 'off', workers: '0', zone: 'UTC' });
    } finally {
      await pool.end();
    }
  });

  it('guardedPool runs queries and connection requests through the caller, bounded: a slow one is DependencyUnavailable and its connection is not lost', async () => {
    const pool = sqlPool(createPool(given.stack.databaseUrl, { max: 1, application: 'pool-guarded', onIdleError: () => undefined }));
    try {
      let runs = 0;
      const guarded = sqlPool(guardedPool(pool, (work) => (runs++, work()), 300));
      assert.equal((await guarded.query<{ n: number }>('select 1 as n')).rows[0]?.n, 1);
      const client = await guarded.connect();
      client.release();
      assert.equal(runs, 2, 'a query and a connection request, each through the caller');
      const slow = await guarded.query('select pg_sleep(1)').catch((e: unknown) => e);
      assert.ok(slow instanceof DependencyUnavailable, 'a query past the deadline');
      assert.match(slow.message, /Postgres did not answer a query within 300 ms/);
      // The pool's one connection is still busy with the sleep: a connection request waits past its deadline.
      const waiting = await guarded.connect().catch((e: unknown) => e);
      assert.ok(waiting instanceof DependencyUnavailable);
      assert.match(waiting.message, /a connection request within 300 ms/);
      // Once the sleep ends, the connection that came too late was given back: the pool (max 1) answers again.
      let answered = false;
      for (const deadline = Date.now() + 5_000; !answered && Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) answered = await databaseReachable(pool);
      assert.equal(answered, true);
      assert.equal((await guarded.query<{ n: number }>('select 2 as n')).rows[0]?.n, 2);
    } finally {
      await pool.end();
    }
  });

  it('databaseReachable answers false, without throwing, when Postgres does not', async () => {
    const pool = createPool('postgres://postgres@127.0.0.1:1/none', { onIdleError: () => undefined });
    try {
      assert.equal(await databaseReachable(pool), false);
    } finally {
      await pool.end();
    }
  });
});
