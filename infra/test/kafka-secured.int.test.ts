// A secured cluster as managed offerings run them: a real broker on loopback with a
// SASL_SSL listener, its certificate signed by a CA this test makes with openssl, SCRAM credentials
// created by the broker's own StorageTool at format time. Append, consume and the hub's admin calls
// run through it; a wrong password or an untrusted certificate stops a service, the stack's set-up
// and hubctl at start with one message naming the setting, instead of a retry loop.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createEventLog, ensureTopics, KafkaAccessError, verifyKafkaAccess, type EventLogOptions } from '@hub/event-log';
import type { EventLog } from '@hub/core';
import { newEvent } from '@hub/events';
import { createLogger } from '@hub/observability';
import { makeServerCertificates } from '../stack/certs.ts';
import { startBroker, type RunningBroker } from '../stack/kafka.ts';
import { local, root } from '../stack/paths.ts';
import { freePort } from '../stack/proc.ts';

const logger = createLogger({ service: 'test', level: 'error' });
const SCRAM_256 = { username: 'hub', password: 'hub-secret-256' };
const SCRAM_512 = { username: 'hub512', password: 'hub-secret-512' };
const PLAIN = { username: 'plainhub', password: 'plain-secret' };

/** Runs a hub entry point with the given environment; resolves with its exit code and stderr. */
function runEntry(file: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...process.execArgv.filter((a) => !a.startsWith('--test')), join(root, file), ...args], {
      env: { PATH: process.env['PATH'] ?? '', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

/**
 * Subscribes from the start in a one-off group until `count` hub events of the topic are handled;
 * resolves with their `n`. Bounded: a client that never consumes fails the test instead of hanging it.
 */
async function readBack(log: EventLog, topic: string, group: string, count: number): Promise<number[]> {
  const seen: number[] = [];
  let done: () => void = () => undefined;
  const all = new Promise<void>((resolve) => (done = resolve));
  const subscription = await log.subscribe({
    group, topics: [topic], ephemeral: true,
    onBatch: async (batch) => {
      for (const r of batch.records) if (r.event) seen.push((r.event.data as { n: number }).n);
      if (seen.length >= count) done();
    },
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([all, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${seen.length} of ${count} events read back from ${topic}`)), 60_000)))]);
    return seen;
  } finally {
    clearTimeout(timer);
    await subscription.stop();
  }
}

describe('a SASL_SSL Kafka listener', () => {
  const home = join(local, 'kafka', `secured-test-${process.pid}`);
  let broker: RunningBroker | undefined;
  let securedBrokers: string[];
  let ca: string;
  let caFile: string;
  before(async () => {
    rmSync(home, { recursive: true, force: true });
    const certs = await makeServerCertificates(join(home, 'certs'));
    caFile = certs.caFile;
    ca = readFileSync(caFile, 'utf8');
    const securedPort = await freePort();
    broker = await startBroker({
      home, port: await freePort(), controllerPort: await freePort(), heapMb: 384,
      secured: {
        port: securedPort,
        keystoreFile: certs.keystoreFile,
        keystorePassword: certs.keystorePassword,
        scramUsers: [{ mechanism: 'SCRAM-SHA-256', ...SCRAM_256 }, { mechanism: 'SCRAM-SHA-512', ...SCRAM_512 }],
        plainUsers: { [PLAIN.username]: PLAIN.password },
      },
    });
    securedBrokers = [`127.0.0.1:${securedPort}`];
  });
  after(async () => {
    await broker?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  const options = (over: Partial<EventLogOptions> = {}): EventLogOptions => ({
    brokers: securedBrokers,
    clientId: 'secured-test',
    logger,
    ssl: { ca },
    sasl: { mechanism: 'scram-sha-256', ...SCRAM_256 },
    ...over,
  });

  it('runs the admin calls, append with acks=all and a consumer group over TLS with SCRAM-SHA-256', async () => {
    await verifyKafkaAccess(options());
    const log = await createEventLog(options());
    try {
      const admin = log.topicAdmin();
      const created = await ensureTopics(admin, [{ name: 'secured.v1', partitions: 2, replicationFactor: 3, config: { 'min.insync.replicas': '2' } }]);
      assert.deepEqual(created, ['secured.v1']);
      const cluster = await admin.describeCluster();
      assert.equal(cluster.brokers[0]?.port, Number(securedBrokers[0]?.split(':')[1]), 'metadata advertises the secured listener');
      await log.append('secured.v1', [newEvent({ type: 't', source: 'test', subject: 'a', key: 'a', data: { n: 1 } })]);
      const offsets = await log.latestOffsets('secured.v1');
      assert.equal([...offsets.values()].reduce((a, b) => a + b, 0n), 1n);

      // A consumer group of its own, over the same listener.
      const read = await log.readTopics(['secured.v1'], { until: (rs) => rs.length >= 1, timeoutMs: 60_000 });
      const seen: unknown = read.records[0]?.event?.data;
      assert.deepEqual(seen, { n: 1 });
    } finally {
      await log.close();
    }
  });

  it('the access check logs in with SCRAM-SHA-256, SCRAM-SHA-512 and PLAIN', async () => {
    for (const login of [options(), options({ sasl: { mechanism: 'scram-sha-512', ...SCRAM_512 } }), options({ sasl: { mechanism: 'plain', ...PLAIN } })]) {
      await verifyKafkaAccess(login, (err) => assert.fail(`${login.sasl?.mechanism ?? 'none'}: the cluster did not answer: ${String(err)}`));
    }
  });

  // The event log through the port as services use it: the same listener, the same settings, each SASL
  // mechanism the hub offers. Each login appends one event with acks=all and reads every event of the
  // topic back in a consumer group of its own, so a login that cannot append or consume fails here.
  it('the event log appends with acks=all and consumes over TLS with SCRAM-SHA-256, SCRAM-SHA-512 and PLAIN', async () => {
    const topic = 'secured.logins.v1';
    const setup = await createEventLog(options());
    try {
      const admin = setup.topicAdmin();
      await ensureTopics(admin, [{ name: topic, partitions: 2, replicationFactor: 1, config: {} }]).finally(() => admin.close());
    } finally {
      await setup.close();
    }
    const logins = [options(), options({ sasl: { mechanism: 'scram-sha-512', ...SCRAM_512 } }), options({ sasl: { mechanism: 'plain', ...PLAIN } })];
    for (const [i, login] of logins.entries()) {
      const mechanism = login.sasl?.mechanism ?? 'none';
      const log = await createEventLog({ ...login, clientId: `secured-${i}` });
      try {
        await log.append(topic, [newEvent({ type: 't', source: 'test', subject: `s${i}`, key: `s${i}`, data: { n: i } })]);
        const seen = await readBack(log, topic, `secured-${i}`, i + 1);
        assert.deepEqual(seen.sort((a, b) => a - b), Array.from({ length: i + 1 }, (_, n) => n), `${mechanism}: every event read back`);
      } finally {
        await log.close();
      }
    }
  });

  // The refusal is the client's own error (@platformatic/kafka codes its errors PLT_KFK_*), found by one attempt.
  const fromClient = (err: KafkaAccessError) => /^PLT_KFK_/.test(String((err.cause as { code?: unknown } | undefined)?.code));

  it('a wrong password is a KafkaAccessError naming the SASL settings, found by one attempt', async () => {
    const err = await verifyKafkaAccess(options({ sasl: { mechanism: 'scram-sha-256', username: 'hub', password: 'wrong' } })).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof KafkaAccessError, String(err));
    assert.equal(err.kind, 'sasl');
    assert.ok(fromClient(err), 'found in the client\'s error');
    assert.match(err.message, /Kafka rejected the SASL credentials \(user "hub", mechanism scram-sha-256\).*KAFKA_SASL_PASSWORD/);
    assert.doesNotMatch(err.message, /wrong/, 'the password is not in the message');
  });

  it('a certificate not signed by a trusted CA is a KafkaAccessError naming KAFKA_SSL_CA_FILE', async () => {
    // No CA given: the system's trusted CAs, which never signed this test CA's broker certificate.
    const err = await verifyKafkaAccess(options({ ssl: {} })).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof KafkaAccessError, String(err));
    assert.equal(err.kind, 'tls');
    assert.ok(fromClient(err), 'found in the client\'s error');
    assert.match(err.message, /Kafka's TLS certificate is not trusted.*KAFKA_SSL_CA_FILE/);
    // A name the certificate does not carry is refused as well (KAFKA_SSL_SERVERNAME).
    const wrongName = await verifyKafkaAccess(options({ ssl: { ca, servername: 'kafka.example.com' } })).then(() => undefined, (e: unknown) => e);
    assert.ok(wrongName instanceof KafkaAccessError && wrongName.kind === 'tls', String(wrongName));
  });

  const env = (over: Record<string, string>) => ({
    KAFKA_BROKERS: securedBrokers.join(','),
    KAFKA_SSL_CA_FILE: caFile,
    KAFKA_SASL_MECHANISM: 'scram-sha-256',
    KAFKA_SASL_USERNAME: SCRAM_256.username,
    KAFKA_SASL_PASSWORD: SCRAM_256.password,
    // Every service reads its whole configuration (the sealing key of drivers' data included) first.
    HUB_SECRET_KEY: randomBytes(32).toString('hex'),
    // Never reached: the Kafka check comes first.
    DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
    OPERATOR_PORT: '0',
    ...over,
  });

  it('a service exits at start with the message when the password is wrong', async () => {
    const { code, stderr } = await runEntry('services/projector/src/main.ts', [], env({ KAFKA_SASL_PASSWORD: 'wrong' }));
    assert.equal(code, 1);
    assert.match(stderr, /Kafka rejected the SASL credentials \(user "hub", mechanism scram-sha-256\)/);
    assert.doesNotMatch(stderr, /\n\s+at /, 'one message, not a stack trace');
  });

  it('hubctl fails with the message when the broker certificate is not trusted', async () => {
    const { code, stderr } = await runEntry('packages/hubctl/src/main.ts', ['party', 'list'], env({ KAFKA_SSL_CA_FILE: '', KAFKA_SSL: 'true' }));
    assert.equal(code, 1);
    assert.match(stderr, /hubctl failed: Kafka's TLS certificate is not trusted/);
  });
});
