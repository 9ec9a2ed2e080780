// The lease replicas share (the prober's): one holder at a time; a standby takes it when the holder
// gives it up or when the holder's connection dies with its process (here: terminated by Postgres).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { advisoryLease, createPool } from '@hub/store';
import { givenTestStack } from '@hub/testing';

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
});
