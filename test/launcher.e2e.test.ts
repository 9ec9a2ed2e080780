// `npm start` as an operator runs it (README, Running the hub), against this test's Kafka and
// database: a healthy start is calm (no warning or error line in the terminal; service logs go to
// files), "ready" comes only once every service's health check passes, TOPIC_PREFIX names the topics
// it creates, each service runs with its memory settings and the projector at a lower CPU priority,
// and a SIGTERM to the npm process stops every process the start began.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { givenTestStack, repoRoot } from '@hub/testing';
import { DEFAULT_PROJECTOR_NICENESS } from '../infra/stack/node-priority.ts';
import { freePort } from './helpers.ts';

const SERVICES = ['ingress', 'projector', 'dispatcher', 'prober'] as const;

/** Pids of the processes whose environment carries this marker (only what this test started). */
function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0').includes(marker)) pids.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids;
}

describe('npm start', () => {
  const given = givenTestStack('launcher');
  const prefix = `l${process.pid}.`;
  const marker = `TOPIC_PREFIX=${prefix}`;
  const logDir = mkdtempSync(join(tmpdir(), 'hub-launcher-'));
  const output: string[] = [];
  const ports: Record<string, number> = {};
  let npm: ChildProcess;
  let readyAt = -1;

  before(async () => {
    const { stack } = given;
    for (const s of [...SERVICES, 'hub']) ports[s] = await freePort();
    // The defaults an operator gets: a PROJECTOR_NICENESS of the shell running the tests is left out.
    const { PROJECTOR_NICENESS: _projectorNiceness, ...shell } = process.env;
    npm = spawn('npm', ['start'], {
      cwd: repoRoot,
      env: {
        ...shell,
        ...stack.env({ TOPIC_PREFIX: prefix, HUB_PORT: String(ports['hub']), HUB_LOG_DIR: logDir, LOG_LEVEL: 'info' }),
        ...Object.fromEntries(SERVICES.map((s) => [`${s.toUpperCase()}_OPERATOR_PORT`, String(ports[s])])),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "ready" within 120 s:\n${output.join('\n')}`)), 120_000);
      let rest = '';
      const onData = (d: Buffer) => {
        const lines = (rest + d.toString()).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) {
          output.push(line);
          if (/\[stack\] ready in/.test(line)) {
            readyAt = output.length;
            clearTimeout(timer);
            resolve();
          }
        }
      };
      npm.stdout?.on('data', onData);
      npm.stderr?.on('data', onData);
      npm.once('exit', (code) => reject(new Error(`npm start exited ${code}:\n${output.join('\n')}`)));
    });
    await ready;
  });

  after(async () => {
    // Whatever a failed assertion left running: only this test's processes, by their marker.
    for (const pid of processesWith(marker)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(logDir, { recursive: true, force: true });
  });

  it('says ready only when every service is healthy, with no warning or error in the terminal', async () => {
    for (const s of SERVICES) {
      const health = await fetch(`http://127.0.0.1:${ports[s]}/healthz`);
      assert.equal(health.status, 200, `${s} /healthz after "ready"`);
    }
    const versions = await fetch(`http://127.0.0.1:${ports['hub']}/ocpi/versions`);
    assert.equal(versions.status, 401, 'the partner API answers (unauthenticated)');
    // npm's own complaints about the machine's npm configuration ("npm warn Unknown env config") are not the hub's.
    const noisy = output.slice(0, readyAt).filter((l) => !l.startsWith('npm warn ') && /"level":"(warn|error)"|\bwarning\b|\bERROR\b|\bWARN\b/i.test(l));
    assert.deepEqual(noisy, [], `a healthy start prints no warnings or errors:\n${noisy.join('\n')}`);
    assert.ok(!output.some((l) => l.startsWith('{')), 'service log lines go to the log files, not the terminal');
  });

  it('writes each service log to HUB_LOG_DIR', async () => {
    // A worker logs its first line once its consumer has joined the group, which may be after "ready".
    const logOf = (s: string) => readFileSync(join(logDir, `${s}.log`), 'utf8');
    const deadline = Date.now() + 30_000;
    while (SERVICES.some((s) => !logOf(s).includes(`"service":"${s}"`)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    for (const s of SERVICES) assert.match(logOf(s), new RegExp(`"service":"${s}"`), `${s}.log`);
    assert.match(readFileSync(join(logDir, 'ingress.log'), 'utf8'), /ingress listening/);
  });

  it('creates the topics with TOPIC_PREFIX', async () => {
    const admin = given.stack.eventLog.topicAdmin();
    try {
      const names = await admin.listTopics();
      for (const topic of ['ocpi.locations.v1', 'ocpi.tariffs.v1', 'ocpi.sessions.v1', 'ocpi.cdrs.v1', 'ocpi.commands.v1', 'hub.registry.v1']) {
        assert.ok(names.includes(`${prefix}${topic}`), `${prefix}${topic} exists`);
      }
    } finally {
      await admin.close();
    }
  });

  it('runs every service with a bounded heap and two malloc arenas (docs/how-to/bound-memory.md)', () => {
    for (const s of SERVICES) {
      const pid = processesWith(marker).find((p) => readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(join('services', s, 'src', 'main.ts')));
      assert.ok(pid, `${s} runs`);
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      assert.ok(args.some((a) => /^--max-old-space-size=\d+$/.test(a)), `${s} has a heap limit: ${args.join(' ')}`);
      assert.ok(args.some((a) => /^--max-semi-space-size=\d+$/.test(a)), `${s} has a young generation limit`);
      assert.ok(readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes('MALLOC_ARENA_MAX=2'), `${s} runs with MALLOC_ARENA_MAX=2`);
    }
  });

  it('runs the projector, in every thread, at a lower CPU priority than the ingress (docs/decisions/0018-partners-before-the-projector.md)', () => {
    const pidOf = (s: string) => processesWith(marker).find((p) => readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(join('services', s, 'src', 'main.ts')));
    // Field 19 of /proc/<pid>/task/<tid>/stat, counted after the thread name's closing parenthesis (a name may hold one).
    const threadNiceness = (pid: number) => readdirSync(`/proc/${pid}/task`).map((tid) => {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[16]);
    });
    const [ingress, projector] = [pidOf('ingress'), pidOf('projector')];
    assert.ok(ingress && projector, 'ingress and projector run');
    const ingressNiceness = threadNiceness(ingress);
    const projectorNiceness = threadNiceness(projector);
    // nice(1) adds to the launcher's niceness (the test may itself run niced), at most up to 19.
    const base = ingressNiceness[0] ?? Number.NaN;
    assert.ok(ingressNiceness.every((n) => n === base), `every ingress thread at the launcher's niceness: ${ingressNiceness.join(' ')}`);
    assert.ok(projectorNiceness.length > 4, 'the projector has its V8 and libuv threads');
    assert.deepEqual(new Set(projectorNiceness), new Set([Math.min(19, base + DEFAULT_PROJECTOR_NICENESS)]), `every projector thread ${DEFAULT_PROJECTOR_NICENESS} below the ingress`);
  });

  it('stops every process it started when the npm process gets SIGTERM', async () => {
    const started = processesWith(marker);
    // npm, its shell, bootstrap, the stack CLI and four services.
    assert.ok(started.length >= 6, `expected the launcher and its services, found ${started.length}`);
    npm.kill('SIGTERM');
    const deadline = Date.now() + 40_000;
    let left = processesWith(marker);
    while (left.length > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      left = processesWith(marker);
    }
    assert.deepEqual(left, [], 'no process of this start is left');
  });
});
