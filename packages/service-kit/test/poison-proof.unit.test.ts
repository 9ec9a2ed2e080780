// Poison-proof apply: a record failure is isolated to the records that cause it,
// which are quarantined with the position moving past them, the others applied in order; a failure of
// a dependency or an unknown one is never taken for the record's (retry, nothing skipped).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RetryLater, applyIsolating, failureReason, type Item } from '../src/poison-proof.ts';

type Kind = 'dependency' | 'record' | 'unknown';
class Failure extends Error {
  readonly kind: Kind;
  readonly code: string | undefined;
  constructor(kind: Kind) {
    super(`${kind} failure`);
    this.kind = kind;
    this.code = kind === 'record' ? '22008' : kind === 'dependency' ? '57P01' : undefined;
  }
}
const classify = (e: unknown): Kind => (e instanceof Failure ? e.kind : 'unknown');

/**
 * A consumer's apply as a transaction over offsets 0..n-1: a chunk commits all or nothing; `poison`
 * offsets fail when applied (not when quarantined); `position` is where the committed chunks end.
 */
function givenConsumer(poison: ReadonlySet<number>, failNext: Kind[] = []) {
  const state = { applied: [] as number[], quarantined: [] as number[], position: 0, calls: 0 };
  const apply = async (chunk: ReadonlyArray<Item<number>>) => {
    await Promise.resolve();
    state.calls++;
    const fail = failNext.shift();
    if (fail) throw new Failure(fail);
    if (chunk.some((i) => !i.quarantine && poison.has(i.record))) throw new Failure('record');
    assert.equal(chunk[0]?.record, state.position, 'chunks are applied in order, without gaps');
    for (const i of chunk) (i.quarantine ? state.quarantined : state.applied).push(i.record);
    state.position = (chunk[chunk.length - 1]?.record ?? -1) + 1;
  };
  return { state, apply };
}
const items = (n: number): Array<Item<number>> => Array.from({ length: n }, (_, i) => ({ record: i }));

describe('applyIsolating', () => {
  it('applies a healthy batch in one call', async () => {
    const { state, apply } = givenConsumer(new Set());
    assert.deepEqual(await applyIsolating(items(10), apply, classify), []);
    assert.deepEqual(state, { applied: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], quarantined: [], position: 10, calls: 1 });
  });

  it('quarantines exactly the poison records, applies every other one in order and moves past all', async () => {
    const { state, apply } = givenConsumer(new Set([3, 4, 9]));
    const quarantined = await applyIsolating(items(12), apply, classify);
    assert.deepEqual(quarantined.map((q) => q.record), [3, 4, 9]);
    assert.match(quarantined[0]?.quarantine?.reason ?? '', /22008/);
    assert.deepEqual(state.applied, [0, 1, 2, 5, 6, 7, 8, 10, 11]);
    assert.deepEqual(state.quarantined, [3, 4, 9]);
    assert.equal(state.position, 12);
  });

  it('keeps records already judged undecodable quarantined, with their own reason', async () => {
    const { state, apply } = givenConsumer(new Set());
    const batch: Array<Item<number>> = [{ record: 0 }, { record: 1, quarantine: { failure: 'undecodable', reason: 'not an event' } }, { record: 2 }];
    const quarantined = await applyIsolating(batch, apply, classify);
    assert.deepEqual(quarantined, [{ record: 1, quarantine: { failure: 'undecodable', reason: 'not an event' } }]);
    assert.deepEqual(state, { applied: [0, 2], quarantined: [1], position: 3, calls: 1 });
  });

  for (const kind of ['dependency', 'unknown'] as const) {
    it(`never quarantines on a ${kind} failure: it throws RetryLater and the position stays`, async () => {
      const { state, apply } = givenConsumer(new Set(), [kind]);
      await assert.rejects(applyIsolating(items(5), apply, classify), (e: unknown) => e instanceof RetryLater && e.kind === kind);
      assert.deepEqual(state, { applied: [], quarantined: [], position: 0, calls: 1 });
    });
  }

  it('a dependency failure while isolating keeps what was committed and throws RetryLater; the retry finishes the batch', async () => {
    // The first call fails on the poison record, the left half applies, the right half meets Postgres gone.
    const failing = givenConsumer(new Set([6]));
    let call = 0;
    const flaky = async (chunk: ReadonlyArray<Item<number>>) => {
      call++;
      if (call === 3) throw new Failure('dependency');
      await failing.apply(chunk);
    };
    await assert.rejects(applyIsolating(items(8), flaky, classify), RetryLater);
    assert.deepEqual(failing.state.applied, [0, 1, 2, 3]);
    assert.equal(failing.state.position, 4);
    // The retry of the whole batch: committed records are skipped by the consumer (here: by offset).
    const retried = await applyIsolating(items(8).filter((i) => i.record >= failing.state.position), failing.apply, classify);
    assert.deepEqual(retried.map((q) => q.record), [6]);
    assert.deepEqual(failing.state.applied, [0, 1, 2, 3, 4, 5, 7]);
    assert.equal(failing.state.position, 8);
  });

  it('a record failure of the quarantine itself is not believed: RetryLater (unknown), nothing skipped', async () => {
    const apply = async () => {
      await Promise.resolve();
      throw new Failure('record');
    };
    await assert.rejects(applyIsolating(items(1), apply, classify), (e: unknown) => e instanceof RetryLater && e.kind === 'unknown');
  });

  it('a reason names class, SQLSTATE and message', () => {
    assert.equal(failureReason(Object.assign(new Error('date/time field value out of range'), { name: 'error', code: '22008' })), 'error 22008: date/time field value out of range');
  });
});
