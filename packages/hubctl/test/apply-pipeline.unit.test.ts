// The rebuild's apply pipeline: fetching runs ahead of applying, but each partition's batches are
// applied in order, never more than `concurrency` at once, holding at most `maxBytes` of batches.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyPipeline } from '../src/apply-pipeline.ts';

const tick = () => new Promise((r) => setImmediate(r));

/** Work that finishes when the test says so, recording when it started and ended. */
function givenControlledWork() {
  const log: string[] = [];
  const pending = new Map<string, () => void>();
  const work = (name: string) => () => {
    log.push(`start ${name}`);
    return new Promise<void>((resolve) => pending.set(name, () => (log.push(`end ${name}`), resolve())));
  };
  const finish = async (name: string) => {
    await tick();
    const done = pending.get(name);
    assert.ok(done, `${name} is running`);
    done();
    await tick();
  };
  return { log, work, finish, running: () => [...pending.keys()].filter((n) => !log.includes(`end ${n}`)) };
}

describe('applyPipeline', () => {
  it('applies one partition’s batches in order, one after the other', async () => {
    const { log, work, finish } = givenControlledWork();
    const pipeline = applyPipeline(4, 10, () => undefined);
    await pipeline.enqueue(0, 1, work('a'));
    await pipeline.enqueue(0, 1, work('b'));
    await tick();
    assert.deepEqual(log, ['start a']);
    await finish('a');
    await finish('b');
    await pipeline.drain();
    assert.deepEqual(log, ['start a', 'end a', 'start b', 'end b']);
  });

  it('runs different partitions side by side, at most `concurrency` at once', async () => {
    const { work, finish, running } = givenControlledWork();
    const pipeline = applyPipeline(2, 10, () => undefined);
    for (const p of [0, 1, 2]) await pipeline.enqueue(p, 1, work(`p${p}`));
    await tick();
    assert.deepEqual(running(), ['p0', 'p1']);
    await finish('p0');
    assert.deepEqual(running(), ['p1', 'p2']);
    await finish('p1');
    await finish('p2');
    await pipeline.drain();
  });

  it('enqueue waits while `maxBytes` of batches wait or run', async () => {
    const { work, finish } = givenControlledWork();
    const pipeline = applyPipeline(1, 2, () => undefined);
    await pipeline.enqueue(0, 1, work('a'));
    await pipeline.enqueue(0, 1, work('b'));
    let third = false;
    const enqueued = pipeline.enqueue(0, 1, work('c')).then(() => (third = true));
    await tick();
    assert.equal(third, false, 'the third batch waits for room');
    await finish('a');
    await enqueued;
    assert.equal(third, true);
    await finish('b');
    await finish('c');
    await pipeline.drain();
  });

  it('holds at most `maxBytes` of batches, taking the waiting ones in their order as bytes free up', async () => {
    const { work, finish } = givenControlledWork();
    const pipeline = applyPipeline(4, 1000, () => undefined);
    const taken: string[] = [];
    const enqueue = (partition: number, bytes: number, name: string) => pipeline.enqueue(partition, bytes, work(name)).then(() => taken.push(name));
    await enqueue(0, 600, 'a');
    await enqueue(1, 300, 'b');
    const waiting = [enqueue(2, 500, 'c'), enqueue(3, 50, 'd')];
    await tick();
    // d would fit (950 bytes) but arrived after c: first come, first taken.
    assert.deepEqual(taken, ['a', 'b']);
    assert.equal(pipeline.heldBytes(), 900);
    await finish('b');
    assert.deepEqual(taken, ['a', 'b'], 'c (500) does not fit beside a (600) yet');
    await finish('a');
    await Promise.all(waiting);
    assert.deepEqual(taken, ['a', 'b', 'c', 'd']);
    assert.equal(pipeline.heldBytes(), 550);
    await finish('c');
    await finish('d');
    await pipeline.drain();
    assert.equal(pipeline.heldBytes(), 0);
  });

  it('takes a batch larger than `maxBytes` once nothing else is held, so the rebuild never stalls', async () => {
    const { work, finish } = givenControlledWork();
    const pipeline = applyPipeline(2, 100, () => undefined);
    await pipeline.enqueue(0, 50, work('small'));
    let big = false;
    const enqueued = pipeline.enqueue(1, 5000, work('big')).then(() => (big = true));
    await tick();
    assert.equal(big, false);
    await finish('small');
    await enqueued;
    assert.equal(pipeline.heldBytes(), 5000);
    await finish('big');
    await pipeline.drain();
  });

  it('a failure is reported once and later batches are dropped, never applied out of order', async () => {
    const errors: Error[] = [];
    const applied: string[] = [];
    const pipeline = applyPipeline(2, 10, (e) => errors.push(e));
    await pipeline.enqueue(0, 1, () => Promise.reject(new Error('deadlock')));
    await pipeline.enqueue(0, 1, () => Promise.resolve(applied.push('after failure')));
    await pipeline.enqueue(1, 1, () => Promise.reject(new Error('second failure')));
    await pipeline.drain();
    await pipeline.enqueue(0, 1, () => Promise.resolve(applied.push('late')));
    await pipeline.drain();
    assert.deepEqual(errors.map((e) => e.message), ['deadlock']);
    assert.deepEqual(applied, []);
  });
});
