// settleWithin: the deadline the ingress puts on Postgres (pg's pool has none) and on health probes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DependencyUnavailable, settleWithin } from '../src/index.ts';

const later = <T>(ms: number, value: T) => new Promise<T>((r) => setTimeout(() => r(value), ms));

describe('settleWithin', () => {
  it('yields what the work yields in time', async () => {
    assert.equal(await settleWithin('postgres', 'a query', 200, later(5, 'rows')), 'rows');
  });

  it('fails with DependencyUnavailable naming the dependency and the work once the time is up; a late result goes to onLate', async () => {
    const late: string[] = [];
    const err = await settleWithin('postgres', 'a connection request', 20, later(80, 'connection'), (v) => late.push(v)).catch((e: unknown) => e);
    assert.ok(err instanceof DependencyUnavailable);
    assert.equal(err.dependency, 'postgres');
    assert.equal(err.contention, false);
    assert.match(err.message, /Postgres did not answer a connection request within 20 ms/);
    assert.deepEqual(late, [], 'not yet arrived');
    await later(100, undefined);
    assert.deepEqual(late, ['connection'], 'the late connection is handed to onLate, not lost');
  });

  it('passes a failure in time on unchanged, and drops one that comes after the deadline', async () => {
    const refused = new Error('duplicate key');
    await assert.rejects(settleWithin('kafka', 'an append', 200, Promise.reject(refused)), (e) => e === refused);
    const tooLate = later(40, undefined).then(() => Promise.reject(new Error('too late')));
    await assert.rejects(settleWithin('kafka', 'an append', 10, tooLate), /Kafka did not answer an append within 10 ms/);
    await later(60, undefined); // no unhandled rejection from the late failure
  });
});
