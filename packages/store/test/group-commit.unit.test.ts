// Group commit (group-commit.ts): when calls are written together, and what a failing batch does to
// the calls in it. Postgres itself is in cdr-receipts-batch.int.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DependencyUnavailable } from '@hub/core';
import { groupCommit } from '../src/group-commit.ts';
import { translatePostgresError } from '../src/postgres-failure.ts';

function recorder(failBatch?: (inputs: readonly number[]) => Error | undefined) {
  const writes: Array<readonly number[]> = [];
  const write = groupCommit<number, string>({
    maxBatch: 3,
    batch: async (inputs) => {
      writes.push(inputs);
      await new Promise((r) => setTimeout(r, 5));
      const failure = failBatch?.(inputs);
      if (failure) throw failure;
      return inputs.map((i) => `b${i}`);
    },
    single: async (input) => {
      writes.push([input]);
      await new Promise((r) => setTimeout(r, 5));
      if (input < 0) throw new Error(`refused ${input}`);
      return `s${input}`;
    },
  });
  return { writes, write };
}

describe('group commit', () => {
  it('writes a call at once when nothing is being written, and the calls made meanwhile together after it', async () => {
    const { writes, write } = recorder();
    assert.equal(await write(1), 's1');
    assert.deepEqual(writes, [[1]]);
    await new Promise((r) => setImmediate(r)); // the writer has seen its queue empty
    const results = await Promise.all([write(2), write(3), write(4), write(5), write(6), write(7)]);
    assert.deepEqual(results, ['s2', 'b3', 'b4', 'b5', 'b6', 'b7']);
    // The first alone at once; the rest while it ran, in batches of at most maxBatch.
    assert.deepEqual(writes.slice(1), [[2], [3, 4, 5], [6, 7]]);
  });

  it('retries a failed batch one by one, so only the call whose data is refused fails', async () => {
    const { writes, write } = recorder((inputs) => (inputs.some((i) => i < 0) ? Object.assign(new Error('22P05'), { code: '22P05' }) : undefined));
    const results = await Promise.allSettled([write(1), write(2), write(-3), write(4)]);
    assert.deepEqual(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)), ['s1', 's2', 'refused -3', 's4']);
    assert.deepEqual(writes, [[1], [2, -3, 4], [2], [-3], [4]]);
  });

  it('fails every call of the batch with DependencyUnavailable when Postgres is away, without retrying each', async () => {
    const away = new DependencyUnavailable('postgres', 'Postgres unavailable (ECONNREFUSED)', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    const { writes, write } = recorder(() => away);
    const first = write(1);
    const results = await Promise.allSettled([write(2), write(3)]);
    await first;
    assert.deepEqual(results.map((r) => r.status === 'rejected' && r.reason === away), [true, true]);
    assert.deepEqual(writes, [[1], [2, 3]]);
  });

  it('retries a batch that hit a deadlock one by one (a matter of the batch, not of Postgres)', async () => {
    const deadlock = translatePostgresError(Object.assign(new Error('deadlock detected'), { code: '40P01' })) as Error;
    const { write } = recorder(() => deadlock);
    const first = write(1);
    assert.deepEqual(await Promise.all([write(2), write(3)]), ['s2', 's3']);
    await first;
  });
});
