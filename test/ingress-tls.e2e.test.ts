// The ingress serving HTTPS itself (HUB_TLS_CERT_FILE, HUB_TLS_KEY_FILE; OCPI 2.2.1
// transport_and_format.asciidoc, Security and authentication): a partner client that verifies the
// hub's certificate against a CA made here, URLs built from the https HUB_PUBLIC_URL, a renewed
// certificate picked up without a restart, and the client address from X-Forwarded-For of a trusted proxy.
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTestStack, jsonLogs, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { makeServerCertificates, type TestCertificates } from '../infra/stack/certs.ts';
import { freePort, hubctl, until } from './helpers.ts';

interface Answer {
  readonly status: number;
  readonly body: string;
}

/** A partner's HTTPS request that trusts only the given CA (no system CAs, no skipping the check). */
function partnerGet(url: string, ca: Buffer, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', ca, headers, agent: false }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the ingress serves HTTPS from certificate files', () => {
  let stack: TestStack;
  let ingress: ServiceProcess;
  let dir: string;
  let first: TestCertificates;
  let hub: string;
  let token = '';

  before(async () => {
    stack = await createTestStack('ingress_tls');
    dir = mkdtempSync(join(tmpdir(), 'hub-tls-'));
    first = await makeServerCertificates(join(dir, 'first'));
    const port = await freePort();
    hub = `https://localhost:${port}`;
    const env = stack.env({
      HUB_PORT: String(port),
      HUB_ENV: 'production',
      HUB_PUBLIC_URL: hub,
      HUB_TLS_CERT_FILE: join(dir, 'cert.pem'),
      HUB_TLS_KEY_FILE: join(dir, 'key.pem'),
      HUB_TRUSTED_PROXIES: '127.0.0.1/32,::1',
    });
    copyFileSync(first.certFile, join(dir, 'cert.pem'));
    copyFileSync(first.keyFile, join(dir, 'key.pem'));
    ingress = await startService('ingress', env, /ingress listening/);
    const out = await hubctl(env, ['party', 'register', '--role', 'CPO', '--country', 'NL', '--party', 'TLS', '--name', 'TLS CPO', '--json']);
    assert.equal(out.code, 0, out.stderr);
    token = (JSON.parse(out.stdout) as { initial_token: string }).initial_token;
  });

  after(async () => {
    await ingress?.stop();
    await stack?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers a partner that verifies its certificate, with versions URLs from HUB_PUBLIC_URL', async () => {
    const res = await partnerGet(`${hub}/ocpi/versions`, readFileSync(first.caFile), { authorization: `Token ${Buffer.from(token).toString('base64')}` });
    assert.equal(res.status, 200, res.body);
    assert.deepEqual((JSON.parse(res.body) as { data: unknown }).data, [{ version: '2.2.1', url: `${hub}/ocpi/2.2.1` }]);
  });

  it('is refused by a client that does not trust the CA, and plain HTTP gets no OCPI answer', async () => {
    const other = await makeServerCertificates(join(dir, 'untrusted'));
    await assert.rejects(partnerGet(`${hub}/ocpi/versions`, readFileSync(other.caFile)), /self[- ]signed|unable to verify|certificate/i);
    const plain = await fetch(hub.replace('https:', 'http:') + '/ocpi/versions').then((r) => r.status, (e: Error) => e.message);
    assert.notEqual(plain, 200);
  });

  it('picks up a renewed certificate and key without a restart', async () => {
    const renewed = await makeServerCertificates(join(dir, 'renewed'));
    copyFileSync(renewed.certFile, join(dir, 'cert.pem'));
    copyFileSync(renewed.keyFile, join(dir, 'key.pem'));
    const renewedCa = readFileSync(renewed.caFile);
    await until('the renewed certificate served', () => partnerGet(`${hub}/ocpi/versions`, renewedCa).then((r) => r.status === 401, () => false), 15_000);
    await assert.rejects(partnerGet(`${hub}/ocpi/versions`, readFileSync(first.caFile)));
    assert.ok(ingress.logs.some((l) => l.includes('TLS certificate loaded again')));
    assert.equal(ingress.child.exitCode, null);
  });

  it('logs the client address from X-Forwarded-For when the peer is a trusted proxy', async () => {
    const ca = readFileSync(join(dir, 'renewed', 'ca.pem'));
    const res = await partnerGet(`${hub}/ocpi/versions`, ca, { 'x-forwarded-for': '198.51.100.9, 203.0.113.7', 'x-request-id': 'xff-trusted' });
    assert.equal(res.status, 401);
    const line = await until('the access log line', () => jsonLogs(ingress).find((l) => l['requestId'] === 'xff-trusted'));
    // The rightmost address the trusted proxy (127.0.0.1) did not write itself is the client's.
    assert.equal(line['client'], '203.0.113.7');
  });
});
