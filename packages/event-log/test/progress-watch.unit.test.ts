// When a subscription calls a partition stalled (src/progress-watch.ts): behind its end, its stored
// position unchanged at two checks in a row, with no batch of it handled in between and no backoff.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { progressWatch, startProgressChecks, type ObservedPartition } from '../src/progress-watch.ts';

const T = 'p.ocpi.locations.v1';
const at = (partition: number, position: bigint | undefined, end: bigint): ObservedPartition => ({ topic: T, partition, position, end });

describe('progressWatch', () => {
  it('calls a partition stalled at the second check that finds it behind at the same position', () => {
    const w = progressWatch(new Set([T]));
    w.assigned({ [T]: [0, 1] });
    assert.deepEqual(w.check([at(0, 5n, 9n), at(1, 3n, 3n)], 1_000), [], 'first sight of the gap');
    const stalled = w.check([at(0, 5n, 12n), at(1, 3n, 3n)], 31_000);
    assert.deepEqual(
      stalled.map((s) => [s.partition, s.position, s.end, s.since]),
      [[0, 5n, 12n, 1_000]],
      'partition 0 did not move; partition 1 is at its end',
    );
  });

  it('a partition that moved, or stands at its end, is not stalled', () => {
    const w = progressWatch(new Set([T]));
    w.assigned({ [T]: [0] });
    w.check([at(0, 5n, 9n)], 0);
    assert.deepEqual(w.check([at(0, 7n, 9n)], 30_000), [], 'moved');
    assert.deepEqual(w.check([at(0, 9n, 9n)], 60_000), [], 'at its end');
    assert.deepEqual(w.check([at(0, 9n, 9n)], 90_000), []);
  });

  it('a partition whose batch was handled since the last check, is being handled, or waits out a backoff is not stalled', () => {
    const w = progressWatch(new Set([T]));
    w.assigned({ [T]: [0] });
    w.check([at(0, 5n, 9n)], 0);
    // Handled and failed (its position did not move): the client does fetch it.
    w.handling(T, 0, true);
    w.handling(T, 0, false);
    assert.deepEqual(w.check([at(0, 5n, 9n)], 30_000), [], 'a batch was handed to the handler since the last check');
    w.handling(T, 0, true);
    assert.deepEqual(w.check([at(0, 5n, 9n)], 60_000), [], 'being handled');
    w.handling(T, 0, false);
    w.backingOff(T, 0, 100_000);
    assert.deepEqual(w.check([at(0, 5n, 9n)], 90_000), [], 'waiting out a backoff (and handled since the last check)');
    assert.deepEqual(w.check([at(0, 5n, 9n)], 95_000), [], 'still waiting');
    assert.deepEqual(w.check([at(0, 5n, 9n)], 120_000), [], 'backoff over: first sight of the gap again');
    assert.equal(w.check([at(0, 5n, 9n)], 150_000).length, 1, 'nothing since: stalled');
  });

  it('forgets what it saw when the assignment changes, and ignores partitions and topics it does not own', () => {
    const w = progressWatch(new Set([T]));
    w.assigned({ [T]: [0], other: [0] });
    assert.deepEqual(w.partitions(), [{ topic: T, partition: 0 }]);
    w.check([at(0, undefined, 4n)], 0);
    w.assigned({ [T]: [0] });
    assert.deepEqual(w.check([at(0, undefined, 4n), at(1, 0n, 4n)], 30_000), [], 'seen before the rebalance only; partition 1 not assigned');
    assert.equal(w.check([at(0, undefined, 4n)], 60_000).length, 1, 'no stored position and records: behind');
  });
});

describe('startProgressChecks', () => {
  it('reads positions and ends of the assigned partitions each interval and hands the stalled ones over; a failed check is reported and the next one runs', async () => {
    const w = progressWatch(new Set([T]));
    w.assigned({ [T]: [0, 1] });
    const stalledCalls: number[][] = [];
    const failures: string[] = [];
    let reads = 0;
    const checks = startProgressChecks({
      everyMs: 20,
      watch: w,
      positions: () => {
        reads++;
        if (reads === 2) return Promise.reject(new Error('Postgres away'));
        return Promise.resolve(new Map([[0, 5n], [1, 8n]]));
      },
      ends: () => Promise.resolve(new Map([[0, 9n], [1, 8n]])),
      onStalled: (stalled) => {
        stalledCalls.push(stalled.map((s) => s.partition));
        return Promise.resolve();
      },
      onCheckFailed: (err) => failures.push((err as Error).message),
    });
    try {
      for (let i = 0; i < 100 && stalledCalls.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    } finally {
      checks.stop();
    }
    assert.deepEqual(failures, ['Postgres away']);
    assert.deepEqual(stalledCalls[0], [0], 'partition 0 behind and still; partition 1 at its end');
  });
});
