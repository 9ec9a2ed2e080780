// 503 means retry (docs/reference/errors.md, "503 during an outage"): with Kafka away a CPO's Session PUT
// and CDR POST are refused with 503 (OCPI 3000) and Retry-After; once Kafka is back the CPO sends
// the same requests again, each is answered 1000, and the eMSP receives the session and the CDR once
// each. This test runs its own broker and stops and restarts only that one.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { call, createTestStack, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { startBroker, type RunningBroker } from '../infra/stack/kafka.ts';
import { local } from '../infra/stack/paths.ts';
import { freePort, hubctl, ocpiExample, onboard, until, type OnboardedPlatform } from './helpers.ts';

type Json = Record<string, unknown>;

describe('503 means retry: a CPO retrying a refused session or CDR gets 1000, the eMSP gets it once', () => {
  const home = join(local, 'kafka', `retry-503-${process.pid}`);
  let ports: { port: number; controllerPort: number };
  let broker: RunningBroker | undefined;
  let stack: TestStack;
  let services: ServiceProcess[] = [];
  let hub: string;
  let cpo: OnboardedPlatform;
  let emsp: OnboardedPlatform;
  const own = { country_code: 'BE', party_id: 'BEC' };

  before(async () => {
    ports = { port: await freePort(), controllerPort: await freePort() };
    broker = await startBroker({ home, ...ports, heapMb: 384 });
    stack = await createTestStack('retry_503', { brokers: [broker.brokers] });
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    const env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', APPEND_TIMEOUT_MS: '2000', CDR_RELAY_AFTER_SECONDS: '5', DELIVERY_RETRY_SCHEDULE_MS: '200,400,600,800,1000', DELIVERY_TIMEOUT_MS: '1000' });
    services = [await startService('ingress', env, /ingress listening/), await startService('dispatcher', env, /dispatcher running/, 60_000)];
    cpo = await onboard(hub, env, 'Retrying CPO', [{ role: 'CPO', countryCode: 'BE', partyId: 'BEC' }]);
    emsp = await onboard(hub, env, 'eMSP', [{ role: 'EMSP', countryCode: 'NL', partyId: 'EMS' }], [
      { identifier: 'credentials', role: 'SENDER' },
      { identifier: 'sessions', role: 'RECEIVER' },
      { identifier: 'cdrs', role: 'RECEIVER' },
    ]);
    assert.equal((await hubctl(env, ['routing', 'enable', '--emsp', 'NL/EMS', '--cpo', 'BE/BEC'])).code, 0);
  });

  after(async () => {
    await Promise.allSettled([...services.map((s) => s.stop()), cpo?.partner.close(), emsp?.partner.close()]);
    await stack?.cleanup();
    await broker?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('refused during the outage, accepted on retry, delivered once', async () => {
    const session: Json = { ...ocpiExample('session_example_1_simple_start.json'), ...own, id: 'S-RETRY', last_updated: new Date().toISOString(), cdr_token: { ...(ocpiExample('session_example_1_simple_start.json')['cdr_token'] as Json), country_code: 'NL', party_id: 'EMS' } };
    const cdr: Json = { ...ocpiExample('cdr_example.json'), ...own, id: 'CDR-RETRY', cdr_token: { ...(ocpiExample('cdr_example.json')['cdr_token'] as Json), country_code: 'NL', party_id: 'EMS' } };
    const pushSession = () => call(hub, 'PUT', '/ocpi/2.2.1/sessions/BE/BEC/S-RETRY', { token: cpo.token, body: session });
    const postCdr = () => call(hub, 'POST', '/ocpi/2.2.1/cdrs', { token: cpo.token, body: cdr });

    await broker?.stop();
    broker = undefined;
    for (const [what, push] of [['session PUT', pushSession], ['CDR POST', postCdr]] as const) {
      const refused = await push();
      assert.equal(refused.status, 503, `${what}: ${refused.text}`);
      assert.equal(refused.body.status_code, 3000, what);
      assert.match(refused.headers['retry-after'] ?? '', /^\d+$/, `${what}: Retry-After`);
    }

    broker = await startBroker({ home, ...ports, heapMb: 384 });
    // The CPO retries as Retry-After tells it to, until it is answered 1000.
    for (const [what, push] of [['session PUT', pushSession], ['CDR POST', postCdr]] as const) {
      await until(`${what} accepted on retry`, async () => {
        const res = await push();
        if (res.status === 503) await new Promise((r) => setTimeout(r, 500));
        return res.body.status_code === 1000;
      }, 60_000);
    }
    const at = (kind: string, id: string) => emsp.partner.received.filter((r) => r.kind === kind && r.body['id'] === id);
    await until('the session and the CDR at the eMSP', () => at('session', 'S-RETRY').length > 0 && at('cdr', 'CDR-RETRY').length > 0, 60_000);
    // A retried CDR that was already accepted is a duplicate (1000 again), never a second delivery.
    assert.equal((await postCdr()).body.status_code, 1000);
    await new Promise((r) => setTimeout(r, 2000));
    assert.equal(at('session', 'S-RETRY').length, 1, 'the session once');
    assert.equal(at('cdr', 'CDR-RETRY').length, 1, 'the CDR once');
  });
});
