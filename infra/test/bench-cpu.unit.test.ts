// The benchmarks' CPU figures per process: what the per-process lines (Postgres's above all, whose
// backends come and go) are read from.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { cpuSeconds, cpuSecondsWithReapedChildren } from '../../bench/cpu.ts';

describe('benchmark CPU of a process tree', () => {
  it('keeps the CPU of a child that ended and was reaped, which the process alone does not show', async () => {
    // A parent that runs a child burning 0.4 s of CPU, waits for it, and then idles until killed.
    // CPU time, not wall time: a child descheduled on a busy host still burns its 0.4 s.
    const burn = 'while (process.cpuUsage().user + process.cpuUsage().system < 400_000);';
    const parentScript = `
      const { spawnSync } = require('node:child_process');
      spawnSync(process.execPath, ['-e', ${JSON.stringify(burn)}]);
      process.stdout.write('reaped\\n');
      setInterval(() => {}, 1000);`;
    const parent = spawn(process.execPath, ['-e', parentScript], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await once(parent.stdout, 'data');
      const pid = parent.pid ?? 0;
      const own = cpuSeconds(pid);
      const withChildren = cpuSecondsWithReapedChildren(pid);
      assert.ok(withChildren - own >= 0.3, `the reaped child's CPU is counted (${withChildren.toFixed(2)} s with it, ${own.toFixed(2)} s without)`);
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
