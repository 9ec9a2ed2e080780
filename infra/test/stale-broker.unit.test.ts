// A broker found running in a home at start is stopped only when the run that launched it is gone:
// two `npm test` runs in one checkout share the test broker's home, and the second must not stop the
// first one's broker. Real processes stand in for the broker and its launcher (no Kafka needed: the
// check reads broker.pid, broker.owner.pid and /proc).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { stopStaleBroker } from '../stack/stale-broker.ts';

const sleeper = (...args: string[]): ChildProcess => spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)', ...args], { stdio: 'ignore' });
const exited = (p: ChildProcess) => new Promise<void>((resolve) => (p.exitCode !== null || p.signalCode !== null ? resolve() : p.once('exit', () => resolve())));

describe('a broker left in a home at start', () => {
  const home = mkdtempSync(join(tmpdir(), 'stale-broker-'));
  const started: ChildProcess[] = [];
  after(() => {
    for (const p of started) p.kill('SIGKILL');
    rmSync(home, { recursive: true, force: true });
  });

  it('is refused while its launcher runs, and stopped once the launcher is gone', async () => {
    // The "broker": a process whose command line names the home's server.properties, as Kafka's does.
    const broker = sleeper(join(home, 'server.properties'));
    const launcher = sleeper();
    started.push(broker, launcher);
    writeFileSync(join(home, 'broker.pid'), String(broker.pid));
    writeFileSync(join(home, 'broker.owner.pid'), String(launcher.pid));

    await assert.rejects(stopStaleBroker(home), new RegExp(`belongs to a run that is still going \\(pid ${launcher.pid}\\)`));
    assert.equal(broker.exitCode, null, 'the other run keeps its broker');

    launcher.kill('SIGKILL');
    await exited(launcher);
    await stopStaleBroker(home);
    await exited(broker);
    assert.equal(broker.signalCode, 'SIGTERM', 'a leftover is stopped');
  });

  it('is stopped when this process (or one above it) launched it', async () => {
    const broker = sleeper(join(home, 'server.properties'));
    started.push(broker);
    writeFileSync(join(home, 'broker.pid'), String(broker.pid));
    writeFileSync(join(home, 'broker.owner.pid'), String(process.ppid));
    await stopStaleBroker(home);
    await exited(broker);
    assert.equal(broker.signalCode, 'SIGTERM');
  });
});
