// The benchmarks' machine-readable last line: what a script comparing runs relies on.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { figuresLine, lastFigures } from '../../bench/figures.ts';

describe('benchmark figures line', () => {
  it('is one line of JSON with the figures in order, unmeasured ones as null', () => {
    const line = figuresLine({ page_p95_ms: 12.3456, rows: 50_000, lag_p95_ms: Number.NaN, rate_per_s: Number.POSITIVE_INFINITY, label: 'x' });
    assert.equal(line.includes('\n'), false);
    assert.deepEqual(Object.entries(JSON.parse(line) as object), [
      ['page_p95_ms', 12.346],
      ['rows', 50_000],
      ['lag_p95_ms', null],
      ['rate_per_s', null],
      ['label', 'x'],
    ]);
  });

  it('refuses a figure name that is not lower snake case', () => {
    assert.throws(() => figuresLine({ 'Page p95': 1 }), /snake case/);
  });

  it('is what lastFigures reads back from a whole output, after the human-readable lines', () => {
    const output = `appended 5 events\npage p95 3 ms\n${figuresLine({ page_p95_ms: 3, sizes: '50k' })}\n\n`;
    assert.deepEqual(lastFigures(output), { page_p95_ms: 3, sizes: '50k' });
    assert.throws(() => lastFigures('page p95 3 ms\n'));
  });

  it('is printed by the command line form that shell benchmarks use', () => {
    const script = fileURLToPath(new URL('../../bench/figures.ts', import.meta.url));
    const out = execFileSync(process.execPath, [...process.execArgv, script, 'cold_start_s=12.5', 'label=warm'], { encoding: 'utf8' });
    assert.deepEqual(lastFigures(out), { cold_start_s: 12.5, label: 'warm' });
  });
});
