// Issue 10, item 3: with Postgres away (refusing connections, its connections cut), a request that
// needs the database is answered 503 with Retry-After (OCPI 3000), as for Kafka, never 500; and the
// ingress answers normally again once Postgres is back. The ingress reaches Postgres through a TCP
// relay this test owns, so "Postgres away" is the relay closing: the shared server is untouched.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, createTestStack, startService, startTcpRelay, type ServiceProcess, type TcpRelay, type TestStack } from '@hub/testing';
import { freePort, onboard, type OnboardedPlatform } from './helpers.ts';

describe('Postgres away: requests that need it are refused with 503 and Retry-After', () => {
  let stack: TestStack;
  let ingress: ServiceProcess;
  let hub: string;
  let cpo: OnboardedPlatform;
  let relay: TcpRelay;
  let target: URL;

  before(async () => {
    stack = await createTestStack('pg_outage');
    const direct = stack.env();
    target = new URL(direct['DATABASE_URL'] ?? '');
    relay = await startTcpRelay({ host: target.hostname, port: Number(target.port || 5432) });
    const viaRelay = new URL(target);
    viaRelay.hostname = '127.0.0.1';
    viaRelay.port = String(relay.port);
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    const env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', DATABASE_URL: viaRelay.toString() });
    ingress = await startService('ingress', env, /ingress listening/);
    cpo = await onboard(hub, { ...env, DATABASE_URL: target.toString() }, 'PG outage CPO', [{ role: 'CPO', countryCode: 'BE', partyId: 'BEC' }]);
  });

  after(async () => {
    await Promise.allSettled([ingress?.stop(), cpo?.partner.close()]);
    await relay.close();
    await stack?.cleanup();
  });

  it('answers 503 with Retry-After while the relay is closed, and 1000 again once it is open', { timeout: 90_000 }, async () => {
    assert.equal((await call(hub, 'GET', '/ocpi/2.2.1/hubclientinfo', { token: cpo.token })).body.status_code, 1000);
    await relay.close();
    // hubclientinfo reads the registry; a location list reads the read model and the rate counter.
    for (const path of ['/ocpi/2.2.1/hubclientinfo', '/ocpi/2.2.1/locations', '/ocpi/2.2.1/cdrs/BE/BEC/NOPE']) {
      const res = await call(hub, 'GET', path, { token: cpo.token }).catch((e: unknown) => {
        throw new Error(`${path}: ${String(e)}; ingress exit ${ingress.child.exitCode}; last log lines:\n${ingress.logs.filter((l) => !l.startsWith("{")).slice(0, 30).join('\n')}`);
      });
      assert.equal(res.status, 503, `${path}: ${res.text}`);
      assert.equal(res.body.status_code, 3000, path);
      assert.match(res.headers['retry-after'] ?? '', /^\d+$/, `${path}: Retry-After`);
    }
    await relay.open();
    let again = 0;
    for (let i = 0; i < 50 && again !== 1000; i++) {
      again = (await call(hub, 'GET', '/ocpi/2.2.1/hubclientinfo', { token: cpo.token })).body.status_code;
      if (again !== 1000) await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(again, 1000, 'answers again once Postgres is back');
    assert.equal(ingress.child.exitCode, null, 'the ingress is still running');
  });
});
