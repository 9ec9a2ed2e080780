// `npm run sandbox` as a newcomer runs it (docs/how-to/sandbox.md), against this test's Kafka and
// Postgres server: it says ready, its hub says it is a sandbox, its counterparts exchange credentials
// and show up in `npm run hubctl -- --sandbox party list`, its data stays apart (its own database,
// topic prefix, stack.env and key), and a SIGTERM to the npm process stops every process it began.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { dropDatabase } from '@hub/store';
import { repoRoot, testEnv } from '@hub/testing';
import { freePort, until } from './helpers.ts';

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

describe('npm run sandbox', () => {
  const prefix = `sbx${process.pid}`;
  const marker = `SANDBOX_TOPIC_PREFIX=${prefix}`;
  const dir = mkdtempSync(join(tmpdir(), 'hub-sandbox-'));
  const output: string[] = [];
  const ports: Record<string, number> = {};
  let databaseUrl = '';
  let env: NodeJS.ProcessEnv = {};
  let npm: ChildProcess;

  before(async () => {
    const { brokers, serverUrl } = testEnv();
    const url = new URL(serverUrl);
    url.pathname = `/hubtest_${prefix}`;
    databaseUrl = url.toString();
    for (const s of [...SERVICES, 'hub', 'counterparts']) ports[s] = await freePort();
    env = {
      ...process.env,
      SANDBOX_KAFKA_BROKERS: brokers.join(','),
      SANDBOX_DATABASE_URL: databaseUrl,
      SANDBOX_TOPIC_PREFIX: prefix,
      SANDBOX_DIR: join(dir, 'state'),
      SANDBOX_LOG_DIR: join(dir, 'logs'),
      SANDBOX_HUB_PORT: String(ports['hub']),
      SANDBOX_PORT: String(ports['counterparts']),
      ...Object.fromEntries(SERVICES.map((s) => [`SANDBOX_${s.toUpperCase()}_OPERATOR_PORT`, String(ports[s])])),
    };
    npm = spawn('npm', ['run', 'sandbox'], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let rest = '';
    const onData = (d: Buffer) => {
      const lines = (rest + d.toString()).split('\n');
      rest = lines.pop() ?? '';
      output.push(...lines);
    };
    npm.stdout?.on('data', onData);
    npm.stderr?.on('data', onData);
    await until('the sandbox running', () => output.some((l) => l.startsWith('[sandbox] sandbox running')), 120_000).catch((e: Error) => {
      throw new Error(`${e.message}:\n${output.join('\n')}`);
    });
  });

  after(async () => {
    for (const pid of processesWith(marker)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await dropDatabase(databaseUrl).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs a hub that says it is a sandbox, with the counterparts connected through the credentials exchange', async () => {
    assert.ok(output.some((l) => l.includes('OCPI roaming hub SANDBOX is running')), output.join('\n'));
    const versions = await fetch(`http://127.0.0.1:${ports['hub']}/ocpi/versions`);
    assert.equal(versions.status, 401);
    assert.equal(versions.headers.get('x-hub-environment'), 'sandbox');
    const info = (await (await fetch(`http://127.0.0.1:${ports['counterparts']}/sandbox`)).json()) as { data: { cpo: { party_id: string } } };
    assert.equal(info.data.cpo.party_id, 'SBX');
    // hubctl --sandbox finds the sandbox through its stack.env (SANDBOX_DIR), never the shell's DATABASE_URL.
    const listed = spawnSync('npm', ['run', '-s', 'hubctl', '--', '--sandbox', 'party', 'list', '--json'], {
      cwd: repoRoot,
      env: { ...env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/not_the_sandbox' },
      encoding: 'utf8',
    });
    assert.equal(listed.status, 0, listed.stderr);
    const parties = JSON.parse(listed.stdout) as Array<{ country_code: string; party_id: string; role: string; registered: boolean }>;
    assert.deepEqual(parties.filter((p) => p.registered).map((p) => `${p.country_code}/${p.party_id}/${p.role}`).sort(), ['DE/SBX/EMSP', 'NL/SBX/CPO']);
  });

  it('keeps its data apart: its own database, topic prefix, stack.env and key', () => {
    const stackEnv = readFileSync(join(dir, 'state', 'stack.env'), 'utf8');
    assert.match(stackEnv, new RegExp(`DATABASE_URL=.*hubtest_${prefix}`));
    assert.match(stackEnv, new RegExp(`TOPIC_PREFIX=${prefix}`));
    assert.ok(existsSync(join(dir, 'state', 'secret.key')), 'a key of its own');
    assert.ok(existsSync(join(dir, 'state', 'counterparts.json')), 'the counterparts keep their tokens');
  });

  it('stops every process it started when the npm process gets SIGTERM', async () => {
    const started = processesWith(marker);
    // npm, its shell, bootstrap, the stack CLI, four services and the counterparts.
    assert.ok(started.length >= 7, `expected the launcher, its services and the counterparts, found ${started.length}`);
    npm.kill('SIGTERM');
    const deadline = Date.now() + 40_000;
    let left = processesWith(marker);
    while (left.length > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      left = processesWith(marker);
    }
    assert.deepEqual(left, [], `still running after SIGTERM:\n${left.map((p) => readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ')).join('\n')}`);
    assert.ok(!existsSync(join(dir, 'state', 'stack.env')), 'stack.env goes with the stack');
  });
});
