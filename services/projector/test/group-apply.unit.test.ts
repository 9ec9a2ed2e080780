// Group commit of the projector: batches submitted together are applied together, one per partition
// per round, in submission order, and a failure reaches every batch of its round.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { groupApply } from '../src/group-apply.ts';

interface Batch {
  readonly partition: number;
  readonly name: string;
}

function givenRecordingApply(fail?: (items: Batch[]) => boolean) {
  const rounds: string[][] = [];
  const apply = (items: Batch[]) => {
    rounds.push(items.map((b) => b.name));
    return fail?.(items) ? Promise.reject(new Error('deadlock detected')) : Promise.resolve(items.map((b) => `${b.name} applied`));
  };
  return { rounds, grouped: groupApply<Batch, string>((b) => b.partition, apply) };
}

describe('groupApply', () => {
  it('applies batches submitted together in one round and answers each with its own result', async () => {
    const { rounds, grouped } = givenRecordingApply();
    const results = await Promise.all([0, 1, 2].map((p) => grouped.submit({ partition: p, name: `p${p}` })));
    assert.deepEqual(rounds, [['p0', 'p1', 'p2']]);
    assert.deepEqual(results, ['p0 applied', 'p1 applied', 'p2 applied']);
  });

  it('takes one batch per partition per round, so a partition’s batches stay in order', async () => {
    const { rounds, grouped } = givenRecordingApply();
    await Promise.all([grouped.submit({ partition: 0, name: 'a' }), grouped.submit({ partition: 0, name: 'b' }), grouped.submit({ partition: 1, name: 'c' })]);
    assert.deepEqual(rounds, [['a', 'c'], ['b']]);
  });

  it('runs one round at a time: batches arriving while a round runs wait and travel together in the next one', async () => {
    const rounds: string[][] = [];
    let finishFirst: () => void = () => undefined;
    const grouped = groupApply<Batch, string>(
      (b) => b.partition,
      (items) => {
        rounds.push(items.map((b) => b.name));
        if (rounds.length === 1) return new Promise((resolve) => (finishFirst = () => resolve(items.map((b) => b.name))));
        return Promise.resolve(items.map((b) => b.name));
      },
    );
    const a = grouped.submit({ partition: 0, name: 'a' });
    await new Promise((r) => setImmediate(r));
    const later = [grouped.submit({ partition: 0, name: 'b' }), grouped.submit({ partition: 1, name: 'c' })];
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(rounds, [['a']], 'no second round while the first runs');
    finishFirst();
    await Promise.all([a, ...later]);
    assert.deepEqual(rounds, [['a'], ['b', 'c']]);
  });

  it('a failed round is retried batch by batch: only the batch that fails is rejected', async () => {
    const { rounds, grouped } = givenRecordingApply((items) => items.some((b) => b.name === 'bad'));
    const outcomes = await Promise.allSettled([grouped.submit({ partition: 0, name: 'bad' }), grouped.submit({ partition: 1, name: 'ok' })]);
    assert.deepEqual(outcomes.map((o) => o.status), ['rejected', 'fulfilled']);
    assert.deepEqual(rounds, [['bad', 'ok'], ['bad'], ['ok']]);
    assert.equal(await grouped.submit({ partition: 0, name: 'again' }), 'again applied');
  });
});
