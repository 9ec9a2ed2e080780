// The hub's Postgres sessions (createPool): settings every query of the hub relies on.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createPool } from '@hub/store';
import { givenTestStack } from '@hub/testing';

describe('Postgres pool', () => {
  const given = givenTestStack('pool_settings');

  it('runs without JIT compilation or parallel workers, in UTC (JIT cost a deep page or a large claim 0.3-1 s)', async () => {
    const pool = createPool(given.stack.databaseUrl, { onIdleError: () => undefined });
    try {
      const { rows } = await pool.query<{ jit: string; workers: string; zone: string }>("select current_setting('jit') as jit, current_setting('max_parallel_workers_per_gather') as workers, current_setting('timezone') as zone");
      assert.deepEqual(rows[0], { jit: 'off', workers: '0', zone: 'UTC' });
    } finally {
      await pool.end();
    }
  });
});
