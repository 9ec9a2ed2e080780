// A service's stop on SIGTERM is bounded (run-service.ts, STOP_DEADLINE_MS): one that hangs in a
// dependency (a frozen broker answers nothing and keeps its connections open) still exits, non-zero
// and saying why, inside a Kubernetes pod's grace instead of being SIGKILLed at its end.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const runServiceModule = fileURLToPath(new URL('../src/run-service.ts', import.meta.url));

/** A real process running runService over a service whose stop resolves after `stopMs` (never when null). */
async function serviceProcess(stopMs: number | null, deadlineMs: number) {
  const stop = stopMs === null ? 'new Promise(() => setInterval(() => {}, 1000))' : `new Promise((r) => setTimeout(r, ${stopMs}))`;
  const script = `import { runService } from ${JSON.stringify(runServiceModule)};
    await runService(async () => ({ stop: () => ${stop} }), { stopDeadlineMs: ${deadlineMs} });
    setInterval(() => {}, 1000);
    process.stdout.write('running\\n');`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  await once(child.stdout, 'data');
  const exit = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  /** The exit code, or 'still running' (the process then SIGKILLed) after 5 s: a hang fails the test, not the run. */
  const exited = async (): Promise<number | null | 'still running'> => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'still running'>((r) => (timer = setTimeout(() => r('still running'), 5_000)));
    const outcome = await Promise.race([exit.then(([code]) => code), late]);
    clearTimeout(timer);
    if (outcome === 'still running') child.kill('SIGKILL');
    return outcome;
  };
  return { child, exited, stderr: () => stderr };
}

describe('runService stop', () => {
  it('exits 1 with the reason once a stop outlasts its deadline', async () => {
    const service = await serviceProcess(null, 300);
    const sentAt = Date.now();
    service.child.kill('SIGTERM');
    assert.equal(await service.exited(), 1);
    assert.match(service.stderr(), /stop did not finish within 300 ms; exiting/);
    assert.ok(Date.now() - sentAt < 5_000, `exited ${Date.now() - sentAt} ms after SIGTERM`);
  });

  it('exits 0 when the stop finishes inside the deadline', async () => {
    const service = await serviceProcess(100, 5_000);
    service.child.kill('SIGTERM');
    assert.equal(await service.exited(), 0, service.stderr());
  });
});
