// Charging profiles between OCPI 2.3.0 and 2.2.1 parties (ocpi-2.3.0/mod_charging_profiles.asciidoc):
// a 2.3.0 eMSP sets, gets and clears a profile on a session of a 2.2.1 CPO (the CPO gets 2.2.1 requests,
// the eMSP the answer and the results in 2.3.0); a 2.2.1 eMSP sets one at a 2.3.0 CPO, which posts its
// result to the hub's 2.3.0 callback; a 2.3.0 CPO pushes an ActiveChargingProfile to a 2.2.1 eMSP.
// Real ingress, projector and dispatcher processes, real Kafka and Postgres.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, createTestStack, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { assertValid, example230, freePort, onboard, onboard230, routeEvery, until, type OnboardedPlatform } from './helpers.ts';

type Json = Record<string, unknown>;
const profile = { charging_rate_unit: 'A', min_charging_rate: 6.1, charging_profile_period: [{ start_period: 0, limit: 16 }, { start_period: 900, limit: 8.1 }] };
const session230 = example230('session_example_1_simple_start.json') as Json;

describe('OCPI 2.3.0 charging profiles beside 2.2.1', () => {
  let stack: TestStack;
  let services: ServiceProcess[] = [];
  let hub: string;
  let env: Record<string, string>;
  let emsp230: OnboardedPlatform; // NL/TST
  let emsp221: OnboardedPlatform; // DE/NEW
  let cpo230: OnboardedPlatform; // BE/BEC
  let cpo221: OnboardedPlatform; // NL/NEW

  const pushSession = async (from: OnboardedPlatform, version: '2.2.1' | '2.3.0', cc: string, pid: string, id: string, emsp: [string, string]) => {
    const cdrToken = { country_code: emsp[0], party_id: emsp[1], uid: 'U1', type: 'RFID', contract_id: `${emsp[0]}-${emsp[1]}-C1` };
    const body = version === '2.3.0' ? { ...session230, country_code: cc, party_id: pid, id, cdr_token: cdrToken } : { ...session230, total_cost: { excl_vat: 2.5 }, country_code: cc, party_id: pid, id, cdr_token: cdrToken };
    const res = await call(hub, 'PUT', `/ocpi/${version}/sessions/${cc}/${pid}/${id}`, { token: from.token, body });
    assert.equal(res.body.status_code, 1000, res.text);
  };

  before(async () => {
    stack = await createTestStack('ocpi230-profiles');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', DELIVERY_RETRY_SCHEDULE_MS: '100,200,400' });
    services = await Promise.all([
      startService('ingress', env, /ingress listening/),
      startService('projector', env, /projector running/),
      startService('dispatcher', env, /dispatcher running/),
    ]);
    const cpoModules = [{ identifier: 'credentials', role: 'SENDER' as const }, { identifier: 'chargingprofiles', role: 'RECEIVER' as const }];
    const emspModules = [{ identifier: 'credentials', role: 'SENDER' as const }, { identifier: 'sessions', role: 'RECEIVER' as const }, { identifier: 'chargingprofiles', role: 'SENDER' as const }];
    emsp230 = await onboard230(hub, env, 'eMSP 2.3.0', { role: 'EMSP', countryCode: 'NL', partyId: 'TST' }, emspModules);
    emsp221 = await onboard(hub, env, 'eMSP 2.2.1', [{ role: 'EMSP', countryCode: 'DE', partyId: 'NEW' }], emspModules);
    cpo230 = await onboard230(hub, env, 'CPO 2.3.0', { role: 'CPO', countryCode: 'BE', partyId: 'BEC' }, cpoModules);
    cpo221 = await onboard(hub, env, 'CPO 2.2.1', [{ role: 'CPO', countryCode: 'NL', partyId: 'NEW' }], cpoModules);
    await routeEvery(env, ['NL/TST', 'DE/NEW'], ['BE/BEC', 'NL/NEW']);
    await pushSession(cpo221, '2.2.1', 'NL', 'NEW', 'S221', ['NL', 'TST']);
    await pushSession(cpo230, '2.3.0', 'BE', 'BEC', 'S230', ['DE', 'NEW']);
    // The hub knows a session's eMSP once it delivered it (the relay looks the CPO up by it).
    await until('the sessions delivered', () => emsp230.partner.received.some((r) => r.kind === 'session' && r.body['id'] === 'S221') && emsp221.partner.received.some((r) => r.kind === 'session' && r.body['id'] === 'S230'), 30_000);
  });

  after(async () => {
    await Promise.allSettled([...services.map((s) => s.stop()), ...[emsp230, emsp221, cpo230, cpo221].map((p) => p?.partner.close())]);
    await stack?.cleanup();
  });

  const results = (emsp: OnboardedPlatform, id: string) => until(`the result ${id}`, () => emsp.partner.received.find((r) => r.kind === 'charging_profile_result' && r.path.endsWith(`/${id}`)), 30_000);

  it('a 2.3.0 eMSP sets, gets and clears a profile on a 2.2.1 CPO’s session: 2.2.1 requests at the CPO, 2.3.0 answers and results', async () => {
    const url = (id: string) => `${emsp230.partner.baseUrl}/ocpi/2.3.0/chargingprofile-results/${id}`;
    const set = { charging_profile: profile, response_url: url('set-1') };
    await assertValid('ocpi-2.3.0/set_charging_profile.json', set);
    const put = await call<Json>(hub, 'PUT', '/ocpi/2.3.0/chargingprofiles/S221', { token: emsp230.token, body: set });
    assert.equal(put.body.status_code, 1000, put.text);
    await assertValid('ocpi-2.3.0/charging_profile_response.json', put.body.data);
    assert.equal(put.body.data?.['result'], 'ACCEPTED');
    const atCpo = cpo221.partner.profileRequests.at(-1);
    assert.equal(atCpo?.method, 'PUT');
    await assertValid('ocpi/set_charging_profile.json', atCpo?.body);
    assert.match(String(atCpo?.body?.['response_url']), /\/ocpi\/2\.2\.1\/chargingprofiles\/callback\//);
    await assertValid('ocpi-2.3.0/charging_profile_result.json', (await results(emsp230, 'set-1')).body);
    const get = await call<Json>(hub, 'GET', `/ocpi/2.3.0/chargingprofiles/S221?duration=900&response_url=${encodeURIComponent(url('get-1'))}`, { token: emsp230.token });
    assert.equal(get.body.data?.['result'], 'ACCEPTED', get.text);
    const active = (await results(emsp230, 'get-1')).body;
    await assertValid('ocpi-2.3.0/charging_profile_result.json', active);
    const clear = await call<Json>(hub, 'DELETE', `/ocpi/2.3.0/chargingprofiles/S221?response_url=${encodeURIComponent(url('clear-1'))}`, { token: emsp230.token });
    assert.equal(clear.body.data?.['result'], 'ACCEPTED', clear.text);
    await assertValid('ocpi-2.3.0/charging_profile_result.json', (await results(emsp230, 'clear-1')).body);
  });

  it('a 2.2.1 eMSP sets a profile on a 2.3.0 CPO’s session: the CPO posts its result to the hub’s 2.3.0 callback, the eMSP gets it in 2.2.1', async () => {
    const set = { charging_profile: profile, response_url: `${emsp221.partner.baseUrl}/ocpi/2.2.1/chargingprofile-results/set-2` };
    const put = await call<Json>(hub, 'PUT', '/ocpi/2.2.1/chargingprofiles/S230', { token: emsp221.token, body: set });
    assert.equal(put.body.data?.['result'], 'ACCEPTED', put.text);
    await assertValid('ocpi/charging_profile_response.json', put.body.data);
    const atCpo = cpo230.partner.profileRequests.at(-1);
    await assertValid('ocpi-2.3.0/set_charging_profile.json', atCpo?.body);
    assert.match(String(atCpo?.body?.['response_url']), /\/ocpi\/2\.3\.0\/chargingprofiles\/callback\//);
    const result = await results(emsp221, 'set-2');
    await assertValid('ocpi/charging_profile_result.json', result.body);
    assert.equal(result.body['result'], 'ACCEPTED');
  });

  it('a 2.3.0 CPO pushes an updated ActiveChargingProfile: the 2.2.1 eMSP of the session gets it in 2.2.1', async () => {
    const update = { start_date_time: '2026-11-26T10:00:00Z', charging_profile: profile };
    await assertValid('ocpi-2.3.0/active_charging_profile.json', update);
    const res = await call(hub, 'PUT', '/ocpi/2.3.0/chargingprofiles/sender/S230', { token: cpo230.token, body: update });
    assert.equal(res.body.status_code, 1000, res.text);
    const got = await until('the ActiveChargingProfile at the 2.2.1 eMSP', () => emsp221.partner.received.find((r) => r.kind === 'active_charging_profile'), 30_000);
    await assertValid('ocpi/active_charging_profile.json', got.body);
    assert.match(got.path, /^\/ocpi\/2\.2\.1\/chargingprofiles\/S230$/);
  });

  it('refusals in 2.3.0: a SetChargingProfile without response_url and a member 2.2.1 cannot hold are 2001; an unknown session is 2001 as in 2.2.1', async () => {
    const noUrl = await call(hub, 'PUT', '/ocpi/2.3.0/chargingprofiles/S221', { token: emsp230.token, body: { charging_profile: profile } });
    assert.equal(noUrl.body.status_code, 2001, noUrl.text);
    const extra = await call(hub, 'PUT', '/ocpi/2.3.0/chargingprofiles/S221', { token: emsp230.token, body: { charging_profile: profile, response_url: `${emsp230.partner.baseUrl}/x`, x_extra: 1 } });
    assert.equal(extra.body.status_code, 2001, extra.text);
    const unknown = await call(hub, 'PUT', '/ocpi/2.3.0/chargingprofiles/NOPE', { token: emsp230.token, body: { charging_profile: profile, response_url: `${emsp230.partner.baseUrl}/y` } });
    const unknown221 = await call(hub, 'PUT', '/ocpi/2.2.1/chargingprofiles/NOPE', { token: emsp221.token, body: { charging_profile: profile, response_url: `${emsp221.partner.baseUrl}/y` } });
    assert.deepEqual([unknown.status, unknown.body.status_code], [unknown221.status, unknown221.body.status_code]);
  });
});
