// The lease replicas share (the prober's): one holder at a time; a standby takes it when the holder
// gives it up or when the holder's connection dies with its process (here: terminated by Postgres).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { advisoryLease, createPool, withAdvisoryLock } from '@hub/store';
import { givenTestStack, sqlPool } from '@hub/testing';

describe('advisoryLease', () => {
  const given = givenTestStack('advisory_lease');
  const KEY = 7_331_999;

  it('has one holder; a standby takes over after a release and after the holder connection dies', async () => {
    const pools = [0, 1].map((i) => createPool(given.stack.databaseUrl, { max: 2, application: `lease-${i}`, onIdleError: () => undefined }));
    try {
      const changes: string[] = [];
      const [a, b] = pools.map((pool, i) => advisoryLease(pool, KEY, (held) => changes.push(`${i}:${held}`)));
      assert.ok(a && b);
      assert.equal(await a.hold(), true, 'the first asker holds it');
      assert.equal(await b.hold(), false, 'the second stands by');
      assert.equal(await a.hold(), true, 'still held');
      await a.release();
      assert.equal(await b.hold(), true, 'the standby takes it after a release');
      assert.equal(await a.hold(), false);
      // The holder's process dies: its connection ends and Postgres releases the lock.
      await given.stack.pool.query(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'lease-1' and datname = current_database()`);
      let taken = false;
      for (const deadline = Date.now() + 10_000; !taken && Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) taken = await a.hold();
      assert.equal(taken, true, 'taken over once the holder connection is gone');
      assert.equal(await b.hold(), false, 'the old holder learns it lost the lease');
      assert.deepEqual(changes, ['0:true', '0:false', '1:true', '0:true', '1:false']);
      await a.release();
      await b.release();
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });

  it('withAdvisoryLock runs one caller at a time; the lock is free again after a failure', async () => {
    const pools = [0, 1].map((i) => createPool(given.stack.databaseUrl, { max: 2, application: `lock-${i}`, onIdleError: () => undefined }));
    try {
      const [p0, p1] = pools;
      assert.ok(p0 && p1);
      const steps: string[] = [];
      let firstIn: () => void = () => undefined;
      const firstHolds = new Promise<void>((r) => (firstIn = r));
      let letFirstGo: () => void = () => undefined;
      const firstMayGo = new Promise<void>((r) => (letFirstGo = r));
      const first = withAdvisoryLock(p0, KEY + 1, async () => {
        steps.push('first in');
        firstIn();
        await firstMayGo;
        steps.push('first out');
      });
      await firstHolds;
      const second = withAdvisoryLock(p1, KEY + 1, async () => void steps.push('second in'));
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(steps, ['first in'], 'the second caller waits while the first holds the lock');
      letFirstGo();
      await Promise.all([first, second]);
      assert.deepEqual(steps, ['first in', 'first out', 'second in']);
      await assert.rejects(withAdvisoryLock(p0, KEY + 1, () => Promise.reject(new Error('load failed'))), /load failed/);
      const c = await sqlPool(p1).connect();
      try {
        const { rows } = await c.query<{ ok: boolean }>('select pg_try_advisory_lock($1) as ok', [KEY + 1]);
        assert.equal(rows[0]?.ok, true, 'released after the failure');
        await c.query('select pg_advisory_unlock($1)', [KEY + 1]);
      } finally {
        c.release();
      }
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });
});
