// With Postgres away (refusing connections, its connections cut), a request that
// needs the database is answered 503 with Retry-After (OCPI 3000), as for Kafka, never 500; and the
// ingress answers normally again once Postgres is back. The ingress reaches Postgres through a TCP
// relay this test owns, so "Postgres away" is the relay closing: the shared server is untouched.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, createTestStack, startService, startTcpRelay, type ServiceProcess, type TcpRelay, type TestStack } from '@hub/testing';
import { freePort, ocpiExample, onboard, type OnboardedPlatform } from './helpers.ts';

const POSTGRES_TIMEOUT_MS = 2000;

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
    const env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', DATABASE_URL: viaRelay.toString(), POSTGRES_TIMEOUT_MS: String(POSTGRES_TIMEOUT_MS) });
    ingress = await startService('ingress', env, /ingress listening/);
    cpo = await onboard(hub, { ...env, DATABASE_URL: target.toString() }, 'PG outage CPO', [{ role: 'CPO', countryCode: 'BE', partyId: 'BEC' }]);
  });

  after(async () => {
    relay?.release();
    await Promise.allSettled([ingress?.stop(), cpo?.partner.close()]);
    await relay.close();
    await stack?.cleanup();
  });

  // Fast refusals (docs/decisions/0002-fast-refusals.md): Postgres hung (the relay holds every byte,
  // connections stay open). The first CDR POSTs wait for POSTGRES_TIMEOUT_MS; once the Postgres circuit
  // breaker has opened they are answered 503 with Retry-After before that timeout could have expired,
  // only a probe (one at a time) still waiting; once the relay lets bytes through again CDRs are
  // accepted.
  it('with Postgres hung, CDR POSTs are refused without waiting once the breaker opens, and accepted after it answers again', { timeout: 90_000 }, async () => {
    const post = async (id: string) => {
      const sentAt = Date.now();
      const res = await call(hub, 'POST', '/ocpi/2.2.1/cdrs', { token: cpo.token, body: { ...ocpiExample('cdr_example.json'), country_code: 'BE', party_id: 'BEC', id } });
      return { id, sentAt, ms: Date.now() - sentAt, status: res.status, code: res.body.status_code, retryAfter: res.headers['retry-after'], text: res.text };
    };
    assert.equal((await post('PG-HANG-0')).code, 1000, 'accepted while Postgres answers');

    relay.hold();
    const hungAt = Date.now();
    let answers: Array<Awaited<ReturnType<typeof post>>>;
    try {
      const pending: Array<Promise<Awaited<ReturnType<typeof post>>>> = [];
      for (let i = 1; Date.now() - hungAt < 8_000; i++) {
        pending.push(post(`PG-HANG-${i}`));
        await new Promise((r) => setTimeout(r, 50));
      }
      answers = await Promise.all(pending);
    } finally {
      relay.release();
    }
    const releasedAt = Date.now();

    const wrong = answers.filter((a) => a.status !== 503 || a.code !== 3000 || !/^\d+$/.test(a.retryAfter ?? ''));
    assert.deepEqual(wrong.map((a) => `${a.id}: HTTP ${a.status} ${a.text}`), [], 'every CDR refused 503 / 3000 with Retry-After while Postgres is hung');
    const late = answers.filter((a) => a.sentAt - hungAt >= POSTGRES_TIMEOUT_MS + 3_500);
    const waited = late.filter((a) => a.ms >= POSTGRES_TIMEOUT_MS);
    const window = Math.max(...late.map((a) => a.sentAt)) - Math.min(...late.map((a) => a.sentAt));
    assert.ok(late.length >= 20, `CDRs sent after the breaker opened: ${late.length}`);
    assert.ok(waited.length <= Math.ceil(window / 1_000) + 1, `only probes wait for the Postgres timeout: ${waited.length} of ${late.length} (${waited.map((a) => a.ms).join(', ')} ms)`);
    const fast = late.filter((a) => a.ms < POSTGRES_TIMEOUT_MS / 2).length;
    assert.ok(fast >= late.length * 0.8, `answered before the Postgres timeout could have expired: ${fast} of ${late.length} (${late.map((a) => a.ms).join(', ')} ms)`);

    let accepted = false;
    for (let i = 0; !accepted && Date.now() - releasedAt < 30_000; i++) {
      accepted = (await post(`PG-BACK-${i}`)).code === 1000;
      if (!accepted) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(accepted, 'a CDR is accepted within 30 s of Postgres answering again');
    assert.equal(ingress.child.exitCode, null, 'the ingress is still running');
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
