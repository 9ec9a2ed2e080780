// Tokens across OCPI 2.3.0, 2.2.1 and 2.1.1 (ocpi-2.3.0/mod_tokens.asciidoc; docs/reference/
// version-mapping.md, OCPI 2.3.0): a 2.3.0 eMSP pushes (PUT, PATCH) and CPOs of each version receive
// and pull its tokens valid in their version; a 2.3.0 CPO pulls a 2.2.1 eMSP's tokens; real-time
// authorization both ways between 2.3.0 and 2.2.1 parties. Real ingress, projector and dispatcher
// processes, real Kafka and Postgres.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, createTestStack, startService, type PartnerSimulator, type ServiceProcess, type TestStack } from '@hub/testing';
import { assertValid, example230, followPages, freePort, onboard, onboard211, onboard230, routeEvery, until, type OnboardedPlatform } from './helpers.ts';

type Json = Record<string, unknown>;

/** The last token with this uid the CPO received that satisfies `ready`. */
const receivedToken = (partner: PartnerSimulator, uid: string, ready: (body: Json) => boolean = () => true) =>
  until(`token ${uid} received`, () => partner.received.filter((r) => r.kind === 'token' && r.body['uid'] === uid && ready(r.body)).at(-1), 30_000);

describe('OCPI 2.3.0 tokens beside 2.2.1 and 2.1.1', () => {
  let stack: TestStack;
  let services: ServiceProcess[] = [];
  let hub: string;
  let env: Record<string, string>;
  let emsp230: OnboardedPlatform;
  let emsp221: OnboardedPlatform;
  let cpo230: OnboardedPlatform;
  let cpo221: OnboardedPlatform;
  let cpo211: OnboardedPlatform;
  let emsp211: OnboardedPlatform;
  // The 2.3.0 example, with an extension member 2.3.0 tolerates (transport_and_format.asciidoc, Non-specified JSON fields).
  const token230: Json = { ...example230('token_example_2_full_rfid.json'), country_code: 'NL', party_id: 'TST', uid: 'T230', x_loyalty: 'gold' };
  const token221: Json = { country_code: 'DE', party_id: 'NEW', uid: 'T221', type: 'RFID', contract_id: 'DE-NEW-C00000001-1', issuer: 'eMSP 2.2.1', valid: true, whitelist: 'ALLOWED', last_updated: '2026-01-01T00:00:00Z' };

  before(async () => {
    stack = await createTestStack('ocpi230-tokens');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', DELIVERY_RETRY_SCHEDULE_MS: '200,400,800,1600' });
    services = await Promise.all([
      startService('ingress', env, /ingress listening/),
      startService('projector', env, /projector running/),
      startService('dispatcher', env, /dispatcher running/),
    ]);
    const emspModules = [{ identifier: 'credentials', role: 'SENDER' as const }, { identifier: 'tokens', role: 'SENDER' as const }];
    const cpoModules = [{ identifier: 'credentials', role: 'SENDER' as const }, { identifier: 'tokens', role: 'RECEIVER' as const }];
    emsp230 = await onboard230(hub, env, 'eMSP 2.3.0', { role: 'EMSP', countryCode: 'NL', partyId: 'TST' }, emspModules);
    emsp221 = await onboard(hub, env, 'eMSP 2.2.1', [{ role: 'EMSP', countryCode: 'DE', partyId: 'NEW' }], emspModules);
    cpo230 = await onboard230(hub, env, 'CPO 2.3.0', { role: 'CPO', countryCode: 'BE', partyId: 'BEC' }, cpoModules);
    cpo221 = await onboard(hub, env, 'CPO 2.2.1', [{ role: 'CPO', countryCode: 'NL', partyId: 'NEW' }], cpoModules);
    cpo211 = await onboard211(hub, env, 'CPO 2.1.1', { role: 'CPO', countryCode: 'FR', partyId: 'OLD' }, cpoModules);
    emsp211 = await onboard211(hub, env, 'eMSP 2.1.1', { role: 'EMSP', countryCode: 'IT', partyId: 'EMO' }, emspModules);
    await routeEvery(env, ['NL/TST', 'DE/NEW'], ['BE/BEC', 'NL/NEW', 'FR/OLD']);
    await routeEvery(env, ['IT/EMO'], ['BE/BEC']);
  });

  after(async () => {
    await Promise.allSettled([...services.map((s) => s.stop()), ...[emsp230, emsp221, cpo230, cpo221, cpo211, emsp211].map((p) => p?.partner.close())]);
    await stack?.cleanup();
  });

  it('a 2.3.0 eMSP PUTs the 2.3.0 Token example: CPOs of 2.3.0, 2.2.1 and 2.1.1 receive it valid in their version', async () => {
    await assertValid('ocpi-2.3.0/token.json', token230);
    const res = await call(hub, 'PUT', '/ocpi/2.3.0/tokens/NL/TST/T230', { token: emsp230.token, body: token230 });
    assert.equal(res.body.status_code, 1000, res.text);
    const at221 = await receivedToken(cpo221.partner, 'T230');
    await assertValid('ocpi/token.json', at221.body);
    assert.equal(at221.path, '/ocpi/2.2.1/tokens/NL/TST/T230');
    assert.ok(!('x_loyalty' in at221.body) && !('hub_version_fields' in at221.body));
    assert.equal(at221.body['contract_id'], token230['contract_id']);
    const at211 = await receivedToken(cpo211.partner, 'T230');
    await assertValid('ocpi-2.1.1/token.json', at211.body);
    assert.equal(at211.body['auth_id'], token230['contract_id']);
    const at230 = await receivedToken(cpo230.partner, 'T230');
    await assertValid('ocpi-2.3.0/token.json', at230.body);
    assert.equal(at230.path, '/ocpi/2.3.0/tokens/NL/TST/T230');
    assert.equal(at230.body['x_loyalty'], 'gold', 'a 2.3.0 reader gets the extension back');
  });

  it('a 2.3.0 eMSP PATCHes the Token (the 2.3.0 PATCH example): the 2.2.1 CPO receives it invalid', async () => {
    const patch = { ...example230('token_patch_example.json'), last_updated: '2026-01-02T00:00:00Z' };
    const res = await call(hub, 'PATCH', '/ocpi/2.3.0/tokens/NL/TST/T230', { token: emsp230.token, body: patch });
    assert.equal(res.body.status_code, 1000, res.text);
    const at221 = await receivedToken(cpo221.partner, 'T230', (b) => b['valid'] === false);
    await assertValid('ocpi/token.json', at221.body);
    const noTime = await call(hub, 'PATCH', '/ocpi/2.3.0/tokens/NL/TST/T230', { token: emsp230.token, body: { valid: true } });
    assert.equal(noTime.body.status_code, 2001, noTime.text);
  });

  it("CPOs of each version pull both eMSPs' tokens, each valid in the CPO's version", async () => {
    assert.equal((await call(hub, 'PUT', '/ocpi/2.2.1/tokens/DE/NEW/T221', { token: emsp221.token, body: token221 })).body.status_code, 1000);
    for (const [version, cpo, schema] of [['2.3.0', cpo230, 'ocpi-2.3.0/token.json'], ['2.2.1', cpo221, 'ocpi/token.json'], ['2.1.1', cpo211, 'ocpi-2.1.1/token.json']] as const) {
      const items = await until(`both tokens in a ${version} pull`, async () => {
        const pulled = (await followPages<Json>(hub, `/ocpi/${version}/tokens?limit=10`, cpo.token)).items;
        return pulled.some((t) => t['uid'] === 'T230' && t['valid'] === false) && pulled.some((t) => t['uid'] === 'T221') ? pulled : undefined;
      });
      for (const t of items) await assertValid(schema, t);
      if (version === '2.3.0') {
        assert.equal(items.find((t) => t['uid'] === 'T230')?.['x_loyalty'], 'gold');
        assert.ok(!('hub_version_fields' in (items.find((t) => t['uid'] === 'T221') ?? {})));
      } else assert.ok(items.every((t) => !('x_loyalty' in t)), version);
    }
    const one = await call<Json>(hub, 'GET', '/ocpi/2.3.0/tokens/DE/NEW/T221', { token: cpo230.token });
    assert.equal(one.body.status_code, 1000, one.text);
    await assertValid('ocpi-2.3.0/token.json', one.body.data);
  });

  it("a 2.1.1 eMSP's pushed Token reaches the 2.3.0 CPO, and the 2.3.0 CPO pulls it, valid 2.3.0 both ways", async () => {
    // mod_tokens.md 3.2 (2.1.1): the eMSP PUTs to the CPO interface {country_code}/{party_id}/{uid}.
    const token211 = { uid: 'T211', type: 'RFID', auth_id: 'IT-EMO-C00000001-1', issuer: 'eMSP 2.1.1', valid: true, whitelist: 'ALLOWED', last_updated: '2026-01-01T00:00:00Z' };
    await assertValid('ocpi-2.1.1/token.json', token211);
    const pushed = await call(hub, 'PUT', '/ocpi/2.1.1/tokens/IT/EMO/T211', { token: emsp211.token, body: token211 });
    assert.equal(pushed.body.status_code, 1000, pushed.text);
    const delivered = await until('the token at the 2.3.0 CPO', () => cpo230.partner.received.find((r) => r.kind === 'token' && r.body['uid'] === 'T211'), 30_000);
    await assertValid('ocpi-2.3.0/token.json', delivered.body);
    assert.deepEqual([delivered.body['country_code'], delivered.body['party_id'], delivered.body['contract_id']], ['IT', 'EMO', 'IT-EMO-C00000001-1']);
    const pulled = await until('the token in the 2.3.0 CPO\'s pull', async () => {
      const list = (await followPages<Json>(hub, '/ocpi/2.3.0/tokens?limit=50', cpo230.token)).items;
      return list.find((t) => t['uid'] === 'T211');
    }, 30_000);
    await assertValid('ocpi-2.3.0/token.json', pulled);
  });

  it("a 2.3.0 CPO asks for real-time authorization of a 2.1.1 eMSP's token: the eMSP asked in 2.1.1, a valid 2.3.0 AuthorizationInfo", async () => {
    emsp211.partner.authorizeAnswer = 'ALLOWED';
    const res = await call<Json>(hub, 'POST', '/ocpi/2.3.0/tokens/T211/authorize', { token: cpo230.token, body: { location_id: 'LOC1', evse_uids: ['3256'] } });
    assert.equal(res.body.status_code, 1000, res.text);
    await assertValid('ocpi-2.3.0/authorization_info.json', res.body.data);
    assert.equal(res.body.data?.['allowed'], 'ALLOWED');
    assert.ok(emsp211.partner.requests.some((r) => r.path === '/ocpi/2.1.1/tokens/T211/authorize'), 'the 2.1.1 eMSP was asked at its 2.1.1 endpoint');
  });

  it("a 2.3.0 CPO asks for real-time authorization of a 2.2.1 eMSP's token: a 2.3.0 AuthorizationInfo", async () => {
    emsp221.partner.authorizeAnswer = 'ALLOWED';
    const res = await call<Json>(hub, 'POST', '/ocpi/2.3.0/tokens/T221/authorize', { token: cpo230.token, body: { location_id: 'LOC1', evse_uids: ['3256'] } });
    assert.equal(res.body.status_code, 1000, res.text);
    await assertValid('ocpi-2.3.0/authorization_info.json', res.body.data);
    assert.equal(res.body.data?.['allowed'], 'ALLOWED');
    assert.ok(emsp221.partner.requests.some((r) => r.path === '/ocpi/2.2.1/tokens/T221/authorize'), 'the 2.2.1 eMSP was asked');
  });

  it("an eMSP answering without the required token (mod_tokens.asciidoc, AuthorizationInfo object): 2.2.1 and 2.3.0 CPOs get the pushed Token, a 2.1.1 CPO the 2.1.1 form", async () => {
    emsp221.partner.authorizeAnswer = 'allowed-without-token';
    try {
      const same = await call<Json>(hub, 'POST', '/ocpi/2.2.1/tokens/T221/authorize', { token: cpo221.token, body: { location_id: 'LOC1', evse_uids: ['3256'] } });
      assert.equal(same.body.status_code, 1000, same.text);
      await assertValid('ocpi/authorization_info.json', same.body.data);
      assert.equal((same.body.data?.['token'] as Json | undefined)?.['contract_id'], token221['contract_id']);
      assert.ok(!('hub_version_fields' in ((same.body.data?.['token'] as Json | undefined) ?? {})));
      const at230 = await call<Json>(hub, 'POST', '/ocpi/2.3.0/tokens/T221/authorize', { token: cpo230.token });
      assert.equal(at230.body.status_code, 1000, at230.text);
      await assertValid('ocpi-2.3.0/authorization_info.json', at230.body.data);
      assert.equal((at230.body.data?.['token'] as Json | undefined)?.['uid'], 'T221');
      const at211 = await call<Json>(hub, 'POST', '/ocpi/2.1.1/tokens/T221/authorize', { token: cpo211.token });
      assert.equal(at211.body.status_code, 1000, at211.text);
      await assertValid('ocpi-2.1.1/authorization_info.json', at211.body.data);
      assert.ok(!('token' in (at211.body.data ?? {})));
    } finally {
      emsp221.partner.authorizeAnswer = 'ALLOWED';
    }
  });

  it('a 2.1.1 eMSP answers for a token it never pushed (named by OCPI-to): the 2.3.0 CPO gets 4000 with UNKNOWN, no Token is made up', async () => {
    emsp211.partner.authorizeAnswer = 'ALLOWED';
    const res = await call<Json>(hub, 'POST', '/ocpi/2.3.0/tokens/NOPUSH/authorize', { token: cpo230.token, headers: { 'OCPI-to-country-code': 'IT', 'OCPI-to-party-id': 'EMO' } });
    assert.equal(res.body.status_code, 4000, res.text);
    assert.deepEqual(res.body.data, { allowed: 'UNKNOWN' });
    assert.ok(emsp211.partner.requests.some((r) => r.path === '/ocpi/2.1.1/tokens/NOPUSH/authorize'), 'the 2.1.1 eMSP was asked');
  });

  it("a 2.2.1 CPO asks for real-time authorization of the 2.3.0 eMSP's token: the 2.3.0 eMSP is asked in 2.3.0, the answer is 2.2.1", async () => {
    emsp230.partner.authorizeAnswer = 'BLOCKED';
    const res = await call<Json>(hub, 'POST', '/ocpi/2.2.1/tokens/T230/authorize', { token: cpo221.token });
    assert.equal(res.body.status_code, 1000, res.text);
    await assertValid('ocpi/authorization_info.json', res.body.data);
    assert.equal(res.body.data?.['allowed'], 'BLOCKED');
    assert.ok(emsp230.partner.requests.some((r) => r.path === '/ocpi/2.3.0/tokens/T230/authorize'), 'the 2.3.0 eMSP was asked at its 2.3.0 endpoint');
  });

  it("a 2.3.0 CPO asks for real-time authorization of the 2.3.0 eMSP's token: asked and answered in 2.3.0 on both sides", async () => {
    emsp230.partner.authorizeAnswer = 'ALLOWED';
    const res = await call<Json>(hub, 'POST', '/ocpi/2.3.0/tokens/T230/authorize', { token: cpo230.token, body: { location_id: 'LOC1', evse_uids: ['3256'] } });
    assert.equal(res.body.status_code, 1000, res.text);
    await assertValid('ocpi-2.3.0/authorization_info.json', res.body.data);
    assert.equal(res.body.data?.['allowed'], 'ALLOWED');
    assert.equal((res.body.data?.['token'] as Json | undefined)?.['uid'], 'T230');
    assert.ok(emsp230.partner.requests.some((r) => r.path === '/ocpi/2.3.0/tokens/T230/authorize'), 'the 2.3.0 eMSP was asked at its 2.3.0 endpoint');
  });

  it('an eMSP answering without the required token: a 2.3.0 and a 2.2.1 CPO get a valid AuthorizationInfo carrying the Token it pushed', async () => {
    for (const [emsp, uid] of [[emsp230, 'T230'], [emsp221, 'T221']] as const) {
      emsp.partner.authorizeAnswer = 'allowed-without-token';
      try {
        for (const [version, caller] of [['2.3.0', cpo230], ['2.2.1', cpo221]] as const) {
          const res = await call<Json>(hub, 'POST', `/ocpi/${version}/tokens/${uid}/authorize`, { token: caller.token });
          assert.equal(res.body.status_code, 1000, res.text);
          await assertValid(version === '2.3.0' ? 'ocpi-2.3.0/authorization_info.json' : 'ocpi/authorization_info.json', res.body.data);
          assert.equal((res.body.data?.['token'] as Json | undefined)?.['uid'], uid, `${version} CPO, ${uid}`);
        }
      } finally {
        emsp.partner.authorizeAnswer = 'ALLOWED';
      }
    }
  });

  it("a 2.1.1 CPO asks for real-time authorization of the 2.3.0 eMSP's token: a valid 2.1.1 AuthorizationInfo", async () => {
    emsp230.partner.authorizeAnswer = 'BLOCKED';
    const res = await call<Json>(hub, 'POST', '/ocpi/2.1.1/tokens/T230/authorize', { token: cpo211.token });
    assert.equal(res.body.status_code, 1000, res.text);
    await assertValid('ocpi-2.1.1/authorization_info.json', res.body.data);
    assert.equal(res.body.data?.['allowed'], 'BLOCKED');
    assert.ok(emsp230.partner.requests.some((r) => r.path === '/ocpi/2.3.0/tokens/T230/authorize'), 'the 2.3.0 eMSP was asked at its 2.3.0 endpoint');
  });

  it('eMSP-side real-time authorization (PUT authorize) between 2.3.0 and 2.2.1 parties, both ways', async () => {
    cpo221.partner.authorizeAnswer = 'ALLOWED';
    const to221 = await call<Json>(hub, 'PUT', '/ocpi/2.3.0/tokens/NL/TST/T230/authorize', { token: emsp230.token, headers: { 'OCPI-to-country-code': 'NL', 'OCPI-to-party-id': 'NEW' }, body: { location_id: 'LOC1' } });
    assert.equal(to221.body.status_code, 1000, to221.text);
    await assertValid('ocpi-2.3.0/authorization_info.json', to221.body.data);
    assert.ok(cpo221.partner.requests.some((r) => r.method === 'PUT' && r.path === '/ocpi/2.2.1/tokens/NL/TST/T230/authorize'));
    cpo230.partner.authorizeAnswer = 'NOT_ALLOWED';
    const to230 = await call<Json>(hub, 'PUT', '/ocpi/2.2.1/tokens/DE/NEW/T221/authorize', { token: emsp221.token, headers: { 'OCPI-to-country-code': 'BE', 'OCPI-to-party-id': 'BEC' }, body: { location_id: 'LOC1' } });
    assert.equal(to230.body.status_code, 1000, to230.text);
    await assertValid('ocpi/authorization_info.json', to230.body.data);
    assert.equal(to230.body.data?.['allowed'], 'NOT_ALLOWED');
    assert.ok(cpo230.partner.requests.some((r) => r.method === 'PUT' && r.path === '/ocpi/2.3.0/tokens/DE/NEW/T221/authorize'));
  });

  it('refusals: a Token type 2.2.1 has no value for (2001), a 2.2.1 caller on the 2.3.0 URL (404)', async () => {
    const res = await call(hub, 'PUT', '/ocpi/2.3.0/tokens/NL/TST/T9', { token: emsp230.token, body: { ...token230, uid: 'T9', type: 'EMAID' } });
    assert.equal(res.body.status_code, 2001, res.text);
    const foreign = await call(hub, 'GET', '/ocpi/2.3.0/tokens', { token: cpo221.token });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.status_code, 2000);
  });

  it('nothing the hub sent the 2.1.1 CPO breaks the 2.1.1 schemas', () => {
    assert.ok(cpo211.partner.received.length > 0);
    assert.deepEqual(cpo211.partner.violations211, []);
  });
});
