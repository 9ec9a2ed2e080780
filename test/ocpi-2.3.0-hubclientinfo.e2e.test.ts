// Hub Client Info for OCPI 2.3.0 parties (ocpi-2.3.0/mod_hub_client_info.asciidoc): a 2.3.0 party pulls
// the ClientInfo of its own and its routed parties from GET /ocpi/2.3.0/hubclientinfo, each valid in
// 2.3.0, and its hubclientinfo receiver gets the ClientInfo pushes (a routed party suspended) in 2.3.0,
// as a 2.2.1 party does. Real ingress, projector and dispatcher processes, real Kafka and Postgres.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, createTestStack, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { assertValid, followPages, freePort, hubctl, onboard, onboard230, until, type OnboardedPlatform } from './helpers.ts';

type Json = Record<string, unknown>;

describe('OCPI 2.3.0 hubclientinfo', () => {
  let stack: TestStack;
  let services: ServiceProcess[] = [];
  let hub: string;
  let env: Record<string, string>;
  let emsp230: OnboardedPlatform;
  let cpo221: OnboardedPlatform;
  const modules = [{ identifier: 'credentials', role: 'SENDER' as const }, { identifier: 'hubclientinfo', role: 'RECEIVER' as const }];

  before(async () => {
    stack = await createTestStack('ocpi230-clientinfo');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', DELIVERY_RETRY_SCHEDULE_MS: '200,400,800' });
    services = await Promise.all([
      startService('ingress', env, /ingress listening/),
      startService('projector', env, /projector running/),
      startService('dispatcher', env, /dispatcher running/),
    ]);
    emsp230 = await onboard230(hub, env, 'eMSP 2.3.0', { role: 'EMSP', countryCode: 'NL', partyId: 'TST' }, modules);
    cpo221 = await onboard(hub, env, 'CPO 2.2.1', [{ role: 'CPO', countryCode: 'BE', partyId: 'BEC' }], modules);
    const out = await hubctl(env, ['routing', 'enable', '--emsp', 'NL/TST', '--cpo', 'BE/BEC']);
    assert.equal(out.code, 0, out.stderr);
  });

  after(async () => {
    await Promise.allSettled([...services.map((s) => s.stop()), emsp230?.partner.close(), cpo221?.partner.close()]);
    await stack?.cleanup();
  });

  const pushed = (cc: string, pid: string) => emsp230.partner.received.filter((r) => r.kind === 'client_info' && r.path === `/ocpi/2.3.0/hubclientinfo/${cc}/${pid}`);

  it('a 2.3.0 eMSP pulls its own and its routed CPO’s ClientInfo, each valid in 2.3.0', async () => {
    const { items, totals } = await followPages<Json>(hub, '/ocpi/2.3.0/hubclientinfo?limit=1', emsp230.token);
    assert.deepEqual(items.map((c) => `${String(c['country_code'])}/${String(c['party_id'])}/${String(c['role'])}`).sort(), ['BE/BEC/CPO', 'NL/TST/EMSP']);
    assert.ok(totals.every((t) => t === '2'), totals.join());
    for (const c of items) await assertValid('ocpi-2.3.0/client_info.json', c);
  });

  it('a 2.2.1 caller (not suspended yet) cannot use the 2.3.0 URL', async () => {
    const foreign = await call(hub, 'GET', '/ocpi/2.3.0/hubclientinfo', { token: cpo221.token });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.status_code, 2000);
  });

  it("the 2.3.0 eMSP's receiver gets the routed CPO's ClientInfo in 2.3.0, and again when the CPO is suspended", async () => {
    const first = await until('the CPO ClientInfo pushed to the 2.3.0 eMSP', () => pushed('BE', 'BEC').at(-1), 30_000);
    await assertValid('ocpi-2.3.0/client_info.json', first.body);
    assert.equal(first.body['status'], 'CONNECTED');
    const out = await hubctl(env, ['party', 'suspend', '--country', 'BE', '--party', 'BEC', '--role', 'CPO']);
    assert.equal(out.code, 0, out.stderr);
    const suspended = await until('the suspended CPO ClientInfo', () => pushed('BE', 'BEC').find((r) => r.body['status'] !== 'CONNECTED'), 30_000);
    await assertValid('ocpi-2.3.0/client_info.json', suspended.body);
  });
});
