// The hub processes' CPU priority (stack/node-priority.ts): the projector's niceness comes from
// PROJECTOR_NICENESS or its default, a value outside 0-19 is refused, a PATH without nice(1) is
// noticed, and the launch command gives every thread of the process that niceness, not only its main thread.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe, it } from 'node:test';
import { atNiceness, DEFAULT_PROJECTOR_NICENESS, launchNiceness, nicenessOf, niceOnPath } from '../stack/node-priority.ts';

describe('hub process priority', () => {
  it('runs the projector below the others unless PROJECTOR_NICENESS says otherwise', () => {
    assert.equal(nicenessOf('projector', {}), DEFAULT_PROJECTOR_NICENESS);
    assert.ok(DEFAULT_PROJECTOR_NICENESS > 0);
    assert.equal(nicenessOf('projector', { PROJECTOR_NICENESS: '0' }), 0);
    assert.equal(nicenessOf('projector', { PROJECTOR_NICENESS: ' 5 ' }), 5);
    assert.equal(nicenessOf('projector', { PROJECTOR_NICENESS: '' }), DEFAULT_PROJECTOR_NICENESS);
    for (const other of ['ingress', 'dispatcher', 'prober', 'hubctl'] as const) assert.equal(nicenessOf(other, { PROJECTOR_NICENESS: '7' }), 0, other);
  });

  it('refuses a niceness that is not an integer from 0 to 19', () => {
    for (const bad of ['-5', '20', 'low', '2.5', '1e1']) {
      assert.throws(() => nicenessOf('projector', { PROJECTOR_NICENESS: bad }), new RegExp(`PROJECTOR_NICENESS must be an integer from 0 to 19, got "${bad.replace('.', '\\.')}"`), bad);
    }
  });

  it('finds nice(1) on a PATH only where an executable of that name is, and launches at 0 without it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-nice-'));
    try {
      assert.equal(niceOnPath(dir), false, 'an empty directory');
      writeFileSync(join(dir, 'nice'), '#!/bin/sh\n', { mode: 0o644 });
      assert.equal(niceOnPath(dir), false, 'a file that is not executable');
      chmodSync(join(dir, 'nice'), 0o755);
      assert.equal(niceOnPath(`/nonexistent${delimiter}${dir}`), true);
      assert.equal(niceOnPath(undefined), false);
      assert.equal(launchNiceness('projector', { PATH: dir }), DEFAULT_PROJECTOR_NICENESS, 'launched through nice(1) where it is');
      assert.equal(launchNiceness('projector', { PATH: '/nonexistent' }), 0, 'at the launcher\'s priority where it is not');
      assert.throws(() => launchNiceness('projector', { PATH: '/nonexistent', PROJECTOR_NICENESS: '20' }), /PROJECTOR_NICENESS/, 'a bad setting is refused either way');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('leaves a command at niceness 0 as it is', () => {
    assert.deepEqual(atNiceness(0, '/usr/bin/node', ['main.ts']), { command: '/usr/bin/node', args: ['main.ts'] });
  });

  it('gives every thread of the launched Node the niceness, V8 and libuv threads too', () => {
    // The child lists its threads' niceness once its worker pool has started (a file read uses it).
    const script = `
      const { readdirSync, readFileSync } = await import('node:fs');
      await (await import('node:fs/promises')).readFile('/proc/self/stat');
      const nice = readdirSync('/proc/self/task').map((tid) => {
        const stat = readFileSync('/proc/self/task/' + tid + '/stat', 'utf8');
        return Number(stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[16]);
      });
      process.stdout.write(JSON.stringify(nice));`;
    const launched = atNiceness(3, process.execPath, ['--input-type=module', '-e', script]);
    const run = spawnSync(launched.command, launched.args, { encoding: 'utf8', timeout: 30_000 });
    assert.equal(run.status, 0, run.stderr);
    const niceness = JSON.parse(run.stdout) as number[];
    assert.ok(niceness.length > 4, `the main thread and Node's own threads: ${run.stdout}`);
    // nice(1) adds to the caller's niceness (a test runner may itself run niced), at most up to 19.
    assert.deepEqual(new Set(niceness), new Set([Math.min(19, getPriority() + 3)]));
  });
});
