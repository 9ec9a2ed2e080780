// startService (src/service-process.ts): a test file whose before hook failed to start one of its
// services (inside Promise.all, so the others were never handed to the after hook) still ends, and
// leaves no service running. Before, its process waited for ever on the stray services' pipes.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../../../infra/stack/proc.ts';
import { createTestStack, type TestStack } from '../src/index.ts';

/** Whether a process runs: a zombie (killed, not reaped yet by its new parent) does not. */
const alive = (pid: number): boolean => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

describe('startService after a failed start', () => {
  let stack: TestStack;
  before(async () => {
    stack = await createTestStack('failed_start');
  });
  after(async () => stack?.cleanup());

  it('the process ends by itself and the services it started end with it', async () => {
    const env = stack.env({ HUB_PORT: String(await freePort()) });
    const child = spawn(process.execPath, [join(import.meta.dirname, 'fixtures', 'failed-start.ts')], { env: { ...process.env, SERVICE_ENV: JSON.stringify(env) }, stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    const ended = await Promise.race([new Promise<boolean>((r) => child.once('exit', () => r(true))), new Promise<boolean>((r) => setTimeout(() => r(false), 90_000))]);
    if (!ended) child.kill('SIGKILL');
    assert.ok(ended, `the process ended by itself:\n${output}`);
    assert.match(output, /start failed: projector: no log line matching/);
    const pids = JSON.parse(/STARTED (\[.*\])/.exec(output)?.[1] ?? '[]') as number[];
    assert.equal(pids.length, 1, 'the ingress had started');
    // SIGKILL is sent as the process exits; its delivery is a moment later.
    for (let i = 0; i < 50 && pids.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(pids.filter(alive), [], 'no service left running');
  });
});
