// The image `npm run image` builds (.local/image/hub.oci.tar), run: its services under `buildah run`
// (chroot isolation, host network) against the test Kafka and Postgres, onboarding simulated
// partners with the image's hubctl, a location push and pull, a session delivery and a command
// round trip through them; then a SIGTERM stop within the grace period, and no secret in the image
// (docs/how-to/deploy-kubernetes.md; docs/decisions/0009-oci-image.md).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { call, createTestStack, repoRoot, sqlPool, startPartnerSimulator, type PartnerSimulator, type TestStack } from '@hub/testing';
import { ensureDatabase, createPool } from '@hub/store';
import { archivePath, HUB_UID, SIZE_LIMIT_MB, storageArgs } from '../../infra/image/build.ts';
import { run } from '../../infra/stack/proc.ts';
import { freePort, ocpiExample, until } from '../helpers.ts';

type Json = Record<string, unknown>;
/**
 * The time a service has from SIGTERM to its exit on Kubernetes: its Deployment's
 * terminationGracePeriodSeconds, less the preStop sleep that runs first (deploy/kubernetes/).
 */
function graceMs(service: string): number {
  const manifest = readFileSync(join(repoRoot, 'deploy', 'kubernetes', `${service}.yaml`), 'utf8');
  const period = Number(/terminationGracePeriodSeconds: (\d+)/.exec(manifest)?.[1]);
  const preStop = Number(/command: \["\/bin\/sleep", "(\d+)"\]/.exec(manifest)?.[1] ?? 0);
  assert.ok(period > 0, `${service}: terminationGracePeriodSeconds`);
  return (period - preStop) * 1000;
}

const buildah = (args: readonly string[]) => run('buildah', [...storageArgs, ...args]);

interface ImageProcess {
  readonly command: string;
  readonly child: ChildProcess;
  readonly logs: string[];
  readonly stdout: string[];
  readonly exited: Promise<number | null>;
}

/** Runs a command of the image in the working container (its entrypoint, its user, its environment). */
function runInImage(container: string, command: string, args: readonly string[], env: Record<string, string>): ImageProcess {
  const child = spawn('buildah', [...storageArgs, 'run', '--isolation', 'chroot', '--net', 'host', ...Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]), container, '--', '/opt/hub/entrypoint.sh', command, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const stdout: string[] = [];
  let buffered = '';
  const feed = (d: Buffer) => {
    buffered += d.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    logs.push(...lines.filter(Boolean));
  };
  child.stdout.on('data', (d: Buffer) => (stdout.push(d.toString()), feed(d)));
  child.stderr.on('data', feed);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { command, child, logs, stdout, exited };
}

async function runToEnd(container: string, command: string, args: readonly string[], env: Record<string, string>): Promise<{ code: number | null; output: string; stdout: string }> {
  const p = runInImage(container, command, args, env);
  const code = await p.exited;
  return { code, output: p.logs.join('\n'), stdout: p.stdout.join('') };
}

/** The Node process a `buildah run` started (chroot isolation: a descendant of it on this host). */
function nodeProcessOf(pid: number): number | undefined {
  const children = (p: number): number[] => {
    const tasks = existsSync(`/proc/${p}/task`) ? readdirSync(`/proc/${p}/task`) : [];
    return tasks.flatMap((t) => {
      try {
        return readFileSync(`/proc/${p}/task/${t}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
      } catch {
        return [];
      }
    });
  };
  const queue = [pid];
  while (queue.length > 0) {
    const p = queue.shift() ?? 0;
    for (const c of children(p)) {
      try {
        // Node names its main thread MainThread; the executable is the image's node.
        if (readlinkSync(`/proc/${c}/exe`).endsWith('/usr/local/bin/node')) return c;
      } catch {
        continue;
      }
      queue.push(c);
    }
  }
  return undefined;
}

describe('the OCI image, run with buildah against the test Kafka and Postgres', () => {
  let stack: TestStack;
  let container = '';
  let env: Record<string, string>;
  let hub: string;
  const services = new Map<string, ImageProcess>();
  const operatorPorts = new Map<string, number>();
  const readyMs = new Map<string, number>();
  const partners: PartnerSimulator[] = [];

  const hubctl = async (args: string[]) => {
    const out = await runToEnd(container, 'hubctl', args, env);
    assert.equal(out.code, 0, out.output);
    return out.stdout;
  };

  /** Registers a party with the image's hubctl and completes the credentials exchange, as a partner does. */
  const onboard = async (role: 'CPO' | 'EMSP', countryCode: string, partyId: string, modules: Array<{ identifier: string; role: 'SENDER' | 'RECEIVER' }>) => {
    const out = await hubctl(['party', 'register', '--role', role, '--country', countryCode, '--party', partyId, '--name', `${role} ${partyId}`, '--json']);
    const registered = JSON.parse(out) as { initial_token: string };
    const partner = await startPartnerSimulator({ modules });
    partners.push(partner);
    const res = await call<{ token: string }>(hub, 'POST', '/ocpi/2.2.1/credentials', {
      token: registered.initial_token,
      body: { token: partner.token, url: partner.versionsUrl, roles: [{ role, country_code: countryCode, party_id: partyId, business_details: { name: partyId } }] },
    });
    assert.equal(res.body.status_code, 1000, res.text);
    return { token: res.body.data?.token ?? '', partner };
  };

  before(async () => {
    assert.ok(existsSync(archivePath), `${archivePath} missing: the image tier builds it first (npm test -- image)`);
    stack = await createTestStack('image');
    container = (await buildah(['from', `oci-archive:${archivePath}`])).trim().split('\n').pop() ?? '';
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    // One environment for every service (HUB_SECRET_KEY is drawn once per env() call). Development:
    // the simulated partners and this hub talk plain HTTP on loopback.
    env = stack.env({ HUB_ENV: 'development', HUB_HOST: '127.0.0.1', HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', DELIVERY_RETRY_SCHEDULE_MS: '100,200,400' });
  });

  after(async () => {
    for (const s of services.values()) s.child.kill('SIGKILL');
    await Promise.allSettled(partners.map((p) => p.close()));
    if (container) await buildah(['rm', container]).catch(() => '');
    await stack?.cleanup();
  });

  it('is the size it promises, runs as a non-root user and carries the OCI labels', async () => {
    const info = JSON.parse(await buildah(['inspect', '--type', 'container', container])) as { OCIv1: { config: { User: string; Env: string[]; Labels: Record<string, string> } } };
    assert.equal(info.OCIv1.config.User, `${HUB_UID}:${HUB_UID}`);
    for (const label of ['title', 'version', 'revision', 'created', 'licenses', 'base.name']) {
      assert.ok(info.OCIv1.config.Labels[`org.opencontainers.image.${label}`], `label org.opencontainers.image.${label}`);
    }
    const id = (await runToEnd(container, 'hubctl', ['--help'], {})).code;
    assert.equal(id, 0);
    const mount = (await buildah(['mount', container])).trim();
    try {
      const mb = Number((await run('du', ['-sxm', mount])).split('\t')[0]);
      assert.ok(mb < SIZE_LIMIT_MB, `${mb} MB, target ${SIZE_LIMIT_MB}`);
      process.stderr.write(`image: ${mb} MB uncompressed, archive ${Math.round(statSync(archivePath).size / 1e6)} MB\n`);
    } finally {
      await buildah(['umount', container]);
    }
  });

  it('holds no secret, no tests, no development dependencies and no Kafka jars', async () => {
    const info = JSON.parse(await buildah(['inspect', '--type', 'container', container])) as { OCIv1: { config: { Env: string[] } } };
    const envNames = info.OCIv1.config.Env.map((e) => e.split('=')[0]);
    for (const secret of ['HUB_SECRET_KEY', 'DATABASE_URL', 'KAFKA_SASL_PASSWORD', 'KAFKA_SASL_USERNAME']) assert.ok(!envNames.includes(secret), `${secret} in the image's environment`);
    const mount = (await buildah(['mount', container])).trim();
    try {
      const found: string[] = [];
      const walk = (dir: string) => {
        for (const e of readdirSync(dir, { withFileTypes: true })) {
          const p = join(dir, e.name);
          const inImage = p.slice(mount.length);
          if (e.isDirectory()) {
            if (/^\/(proc|sys|dev)$/.test(inImage)) continue;
            if (e.name === '.git' || /\/opt\/hub\/(test|bench|docs|deploy|packages\/testing)$/.test(inImage) || /\/node_modules\/(typescript|eslint|kubernetes-models|json-schema-to-typescript)$/.test(inImage)) found.push(inImage);
            walk(p);
            continue;
          }
          if (!e.isFile()) continue;
          if (/\.(jar|p12|jks|key)$|^\.(env|npmrc|pgpass|netrc)$|^id_(rsa|ed25519|ecdsa)$/.test(e.name)) found.push(inImage);
          // The hub's own tests (third-party packages publish some of theirs: not ours to strip).
          if (inImage.startsWith('/opt/hub/') && !inImage.includes('/node_modules/') && /\.test\.ts$/.test(e.name)) found.push(inImage);
          const size = statSync(p).size;
          if (size >= 8_000_000) continue;
          const text = readFileSync(p, 'latin1');
          // A PEM private key with its body, in a file that is not a program (GnuTLS's library holds one of its own self-tests).
          if (!text.startsWith('\x7fELF') && /-----BEGIN [A-Z ]*PRIVATE KEY-----\r?\n[A-Za-z0-9+/=]{40,}/.test(text)) found.push(inImage);
        }
      };
      walk(mount);
      assert.deepEqual(found, []);
    } finally {
      await buildah(['umount', container]);
    }
  });

  it('migrate applies the migrations and creates the topics on an empty database and prefix', async () => {
    const url = new URL(stack.databaseUrl);
    url.pathname = `${url.pathname}_migrate`;
    await ensureDatabase(url.toString());
    const prefix = `${stack.topicPrefix}m`;
    const out = await runToEnd(container, 'migrate', [], { ...env, DATABASE_URL: url.toString(), TOPIC_PREFIX: prefix });
    assert.equal(out.code, 0, out.output);
    const pool = sqlPool(createPool(url.toString(), { max: 1, application: 'test-image-migrate', onIdleError: () => undefined }));
    try {
      const { rows } = await pool.query<{ n: string }>(`select count(*) as n from information_schema.tables where table_schema = 'public'`);
      assert.ok(Number(rows[0]?.n) >= 10, `${rows[0]?.n} tables`);
    } finally {
      await pool.end();
    }
    const admin = stack.eventLog.topicAdmin();
    try {
      const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
      assert.ok(topics.some((t) => t.endsWith('ocpi.locations.v1')), topics.join(', '));
    } finally {
      await admin.close();
    }
  });

  it('starts ingress, projector, dispatcher and prober, each ready on its /healthz', async () => {
    await Promise.all(
      ['ingress', 'projector', 'dispatcher', 'prober'].map(async (name) => {
        const operatorPort = await freePort();
        operatorPorts.set(name, operatorPort);
        const started = Date.now();
        services.set(name, runInImage(container, name, [], { ...env, OPERATOR_PORT: String(operatorPort) }));
        await until(
          `${name} ready`,
          () => {
            const s = services.get(name);
            if (s?.child.exitCode !== null) throw new Error(`${name} exited:\n${s?.logs.slice(-20).join('\n')}`);
            return fetch(`http://127.0.0.1:${operatorPort}/healthz`).then((r) => r.status === 200, () => false);
          },
          90_000,
        );
        readyMs.set(name, Date.now() - started);
      }),
    );
    process.stderr.write(`start to ready in the image: ${[...readyMs].map(([s, ms]) => `${s} ${(ms / 1000).toFixed(1)} s`).join(', ')}\n`);
  });

  it('onboards a CPO and an eMSP, and carries a location push and pull, a session delivery and a command round trip', async () => {
    const cpo = await onboard('CPO', 'BE', 'BEC', [
      { identifier: 'credentials', role: 'SENDER' },
      { identifier: 'commands', role: 'RECEIVER' },
    ]);
    const emsp = await onboard('EMSP', 'NL', 'TST', [
      { identifier: 'credentials', role: 'SENDER' },
      { identifier: 'sessions', role: 'RECEIVER' },
    ]);
    await hubctl(['routing', 'enable', '--emsp', 'NL/TST', '--cpo', 'BE/BEC']);
    // Location push (CPO) and pull (eMSP), through Kafka and the projector's read model.
    const location = { ...ocpiExample('location_example.json'), country_code: 'BE', party_id: 'BEC', id: 'LOC1' };
    assert.equal((await call(hub, 'PUT', '/ocpi/2.2.1/locations/BE/BEC/LOC1', { token: cpo.token, body: location })).body.status_code, 1000);
    const pulled = await until('the location in the eMSP pull', async () => {
      const res = await call<Json[]>(hub, 'GET', '/ocpi/2.2.1/locations', { token: emsp.token });
      return res.body.data?.find((l) => l['id'] === 'LOC1');
    });
    assert.equal(pulled['party_id'], 'BEC');
    // Session delivery by the dispatcher to the eMSP.
    const session = { ...ocpiExample('session_example_1_simple_start.json'), country_code: 'BE', party_id: 'BEC', id: 'IMAGE-S1' };
    assert.equal((await call(hub, 'PUT', '/ocpi/2.2.1/sessions/BE/BEC/IMAGE-S1', { token: cpo.token, body: session })).body.status_code, 1000);
    await until('the session at the eMSP', () => emsp.partner.received.find((r) => r.kind === 'session' && r.body['id'] === 'IMAGE-S1'), 30_000);
    // Command round trip: eMSP -> hub -> CPO, CPO's result -> hub callback -> eMSP response_url.
    const responseUrl = `${emsp.partner.baseUrl}/ocpi/2.2.1/command-results/image-start-1`;
    const res = await call<Json>(hub, 'POST', '/ocpi/2.2.1/commands/START_SESSION', {
      token: emsp.token,
      body: { response_url: responseUrl, token: ocpiExample('token_example_2_full_rfid.json'), location_id: 'LOC1', evse_uid: '3256' },
    });
    assert.equal(res.body.data?.['result'], 'ACCEPTED', res.text);
    assert.equal(cpo.partner.commands.at(-1)?.command, 'START_SESSION');
    const result = await until('the command result at the eMSP', () => emsp.partner.received.find((r) => r.kind === 'command_result' && r.path.endsWith('/image-start-1')), 30_000);
    assert.deepEqual(result.body, { result: 'ACCEPTED' });
  });

  it('stops every service cleanly on SIGTERM within its grace period on Kubernetes', async () => {
    const times = await Promise.all(
      [...services].map(async ([name, s]) => {
        const pid = nodeProcessOf(s.child.pid ?? 0);
        assert.ok(pid, `${name}: its node process under buildah run`);
        const started = Date.now();
        // What the container runtime does on a stop: SIGTERM to the container's process (the entrypoint execs node).
        process.kill(pid, 'SIGTERM');
        const grace = graceMs(name);
        const code = await Promise.race([s.exited, new Promise<'late'>((r) => setTimeout(() => r('late'), grace))]);
        assert.equal(code, 0, `${name} after SIGTERM: ${code}\n${s.logs.slice(-10).join('\n')}`);
        return `${name} ${Date.now() - started} ms (grace ${grace / 1000} s)`;
      }),
    );
    process.stderr.write(`stopped on SIGTERM: ${times.join(', ')}\n`);
    for (const s of services.values()) assert.ok(!s.logs.some((l) => /"level":"error"/.test(l)), `${s.command} logged an error:\n${s.logs.filter((l) => /"level":"error"/.test(l)).join('\n')}`);
    services.clear();
  });
});
