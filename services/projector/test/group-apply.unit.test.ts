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

  it('batches arriving while a round runs travel together in the next one', async () => {
    const { rounds, grouped } = givenRecordingApply();
    const first = grouped.submit({ partition: 0, name: 'first' });
    await new Promise((r) => setImmediate(r));
    const next = [grouped.submit({ partition: 1, name: 'x' }), grouped.submit({ partition: 2, name: 'y' })];
    await Promise.all([first, ...next]);
    assert.deepEqual(rounds, [['first'], ['x', 'y']]);
  });

  it('a failed round rejects each of its batches; the next round still runs', async () => {
    const { rounds, grouped } = givenRecordingApply((items) => items.some((b) => b.name === 'bad'));
    const outcomes = await Promise.allSettled([grouped.submit({ partition: 0, name: 'bad' }), grouped.submit({ partition: 1, name: 'ok' })]);
    assert.deepEqual(outcomes.map((o) => o.status), ['rejected', 'rejected']);
    assert.equal(await grouped.submit({ partition: 1, name: 'again' }), 'again applied');
    assert.deepEqual(rounds, [['bad', 'ok'], ['again']]);
  });
});
