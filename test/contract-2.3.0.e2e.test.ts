// Contract test of the OCPI 2.3.0 edge: every /ocpi/2.3.0 operation of docs/openapi.json is called
// through the real ingress, projector and dispatcher by 2.3.0 partners (and a 2.2.1 eMSP commanding the
// 2.3.0 CPO), and every answer is checked against the
// document (path template, method, HTTP status, headers, envelope, data schema of schemas/ocpi-2.3.0).
// test/contract.e2e.test.ts does the same for the 2.2.1 operations.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, beforeEach, describe, it } from 'node:test';
import { openApiContract, type ObservedResponse } from '@hub/schemas/api-doc-contract';
import { call, createTestStack, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { example230, freePort, hubctl, onboard, onboard230, until, type OnboardedPlatform } from './helpers.ts';

type Json = Record<string, unknown>;
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
const doc = (name: string) => JSON.parse(readFileSync(new URL(`../docs/${name}`, import.meta.url), 'utf8')) as Json;
const location230 = example230('location_example.json');

describe('contract: the OCPI 2.3.0 operations answer as docs/openapi.json says', () => {
  const openapi = openApiContract(doc('openapi.json'));
  let stack: TestStack;
  let services: ServiceProcess[] = [];
  let hub: string;
  let env: Record<string, string>;
  let cpo: OnboardedPlatform;
  let emsp: OnboardedPlatform;
  let emsp221: OnboardedPlatform;
  const covered = new Set<string>();
  const problems: string[] = [];

  async function send(method: Method, path: string, options: { token?: string; body?: unknown; headers?: Record<string, string> } = {}) {
    const res = await call<unknown>(hub, method, path, options);
    const observed: ObservedResponse = { method, path: path.split('?')[0] ?? path, status: res.status, headers: res.headers, body: res.body };
    problems.push(...openapi.check(observed));
    covered.add(`${method} ${openapi.template(observed.path) ?? path}`);
    return res;
  }

  before(async () => {
    stack = await createTestStack('contract230');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1' });
    services = [
      await startService('ingress', env, /ingress listening/),
      await startService('projector', env, /projector running/, 60_000),
      await startService('dispatcher', env, /dispatcher running/, 60_000),
    ];
    cpo = await onboard230(hub, env, 'Contract CPO', { role: 'CPO', countryCode: 'BE', partyId: 'BEC' }, [{ identifier: 'credentials', role: 'SENDER' }, { identifier: 'commands', role: 'RECEIVER' }, { identifier: 'tokens', role: 'RECEIVER' }]);
    emsp = await onboard230(hub, env, 'Contract eMSP', { role: 'EMSP', countryCode: 'NL', partyId: 'TST' }, [{ identifier: 'credentials', role: 'SENDER' }, { identifier: 'tokens', role: 'SENDER' }]);
    emsp221 = await onboard(hub, env, 'Contract eMSP 2.2.1', [{ role: 'EMSP', countryCode: 'DE', partyId: 'OLD' }]);
    for (const e of ['NL/TST', 'DE/OLD']) assert.equal((await hubctl(env, ['routing', 'enable', '--emsp', e, '--cpo', 'BE/BEC'])).code, 0);
  });

  beforeEach(() => {
    problems.length = 0;
  });

  after(async () => {
    await Promise.allSettled([...services.map((s) => s.stop()), cpo?.partner.close(), emsp?.partner.close(), emsp221?.partner.close()]);
    await stack?.cleanup();
  });

  it('versions and credentials', async () => {
    assert.equal((await send('GET', '/ocpi/2.3.0', { token: cpo.token })).body.status_code, 1000);
    assert.equal((await send('GET', '/ocpi/2.3.0/credentials', { token: cpo.token })).body.status_code, 1000);
    const again = { token: cpo.partner.token, url: cpo.partner.versionsUrl, roles: [{ role: 'CPO', country_code: 'BE', party_id: 'BEC', business_details: { name: 'Contract CPO' } }] };
    assert.equal((await send('POST', '/ocpi/2.3.0/credentials', { token: cpo.token, body: again })).status, 405);
    const rotated = await send('PUT', '/ocpi/2.3.0/credentials', { token: cpo.token, body: again });
    assert.equal(rotated.body.status_code, 1000, rotated.text);
    cpo = { ...cpo, token: String((rotated.body.data as Json)['token']) };
    assert.equal((await send('PUT', '/ocpi/2.3.0/credentials', { token: cpo.token, body: { ...again, roles: [] } })).body.status_code, 2001);
    // A throwaway 2.3.0 party registers and unregisters.
    const other = await onboard230(hub, env, 'Leaving CPO', { role: 'CPO', countryCode: 'FR', partyId: 'BYE' });
    assert.equal((await send('DELETE', '/ocpi/2.3.0/credentials', { token: other.token })).body.status_code, 1000);
    await other.partner.close();
    assert.deepEqual(problems, []);
  });

  it('hubclientinfo', async () => {
    const res = await send('GET', '/ocpi/2.3.0/hubclientinfo?limit=5', { token: emsp.token });
    assert.equal(res.body.status_code, 1000, res.text);
    assert.deepEqual(problems, []);
  });

  it('locations: pushes, details, pulls and refusals', async () => {
    const loc = `/ocpi/2.3.0/locations/BE/BEC/${String(location230['id'])}`;
    assert.equal((await send('PUT', loc, { token: cpo.token, body: location230 })).body.status_code, 1000);
    assert.equal((await send('PATCH', loc, { token: cpo.token, body: { name: 'Renamed', last_updated: '2026-01-01T00:00:00Z' } })).body.status_code, 1000);
    const evse = (location230['evses'] as Json[])[0] as Json;
    assert.equal((await send('PUT', `${loc}/3256`, { token: cpo.token, body: evse })).body.status_code, 1000);
    assert.equal((await send('PATCH', `${loc}/3256`, { token: cpo.token, body: { status: 'CHARGING', last_updated: '2026-01-01T00:00:00Z' } })).body.status_code, 1000);
    const connector = (evse['connectors'] as Json[])[0] as Json;
    assert.equal((await send('PUT', `${loc}/3256/1`, { token: cpo.token, body: connector })).body.status_code, 1000);
    assert.equal((await send('PATCH', `${loc}/3256/1`, { token: cpo.token, body: { tariff_ids: ['12'], last_updated: '2026-01-01T00:00:00Z' } })).body.status_code, 1000);
    for (const path of [loc, `${loc}/3256`, `${loc}/3256/1`]) {
      assert.equal((await send('GET', path, { token: cpo.token })).body.status_code, 1000);
      assert.equal((await send('DELETE', path, { token: cpo.token })).status, 405);
    }
    assert.equal((await send('PUT', '/ocpi/2.3.0/locations/BE/BEC/LOC2', { token: cpo.token, body: { ...location230, id: 'LOC2', coordinates: 5 } })).body.status_code, 2001);
    for (let i = 0; i < 50; i++) {
      const list = await send('GET', '/ocpi/2.3.0/locations?limit=1', { token: emsp.token });
      if ((list.body.data as unknown[]).length === 1) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(problems, []);
  });

  it('tariffs: pushes, details, pulls, deletes and refusals', async () => {
    const tariff: Json = { ...example230('tariff_20_simple_north_american_inclusive.json'), country_code: 'BE', party_id: 'BEC', id: 'T20' };
    const path = '/ocpi/2.3.0/tariffs/BE/BEC/T20';
    assert.equal((await send('PUT', path, { token: cpo.token, body: tariff })).body.status_code, 1000);
    assert.equal((await send('PUT', '/ocpi/2.3.0/tariffs/BE/BEC/T21', { token: cpo.token, body: { ...tariff, id: 'T21', tax_included: 'MAYBE' } })).body.status_code, 2001);
    assert.equal((await send('PATCH', path, { token: cpo.token, body: { last_updated: '2026-01-01T00:00:00Z' } })).status, 405);
    assert.equal((await send('GET', path, { token: cpo.token })).body.status_code, 1000);
    await until('the tariff in a 2.3.0 pull', async () => ((await send('GET', '/ocpi/2.3.0/tariffs?limit=5', { token: emsp.token })).body.data as Json[]).length > 0);
    assert.equal((await send('DELETE', path, { token: cpo.token })).body.status_code, 1000);
    assert.deepEqual(problems, []);
  });

  it('sessions and CDRs: pushes, the CPO reads its CDR back, refusals', async () => {
    const cdrToken = { country_code: 'NL', party_id: 'TST', uid: 'T1', type: 'RFID', contract_id: 'NL-TST-C1' };
    const session: Json = { ...example230('session_example_1_simple_start.json'), country_code: 'BE', party_id: 'BEC', cdr_token: cdrToken };
    const path = `/ocpi/2.3.0/sessions/BE/BEC/${String(session['id'])}`;
    assert.equal((await send('PUT', path, { token: cpo.token, body: session })).body.status_code, 1000);
    assert.equal((await send('PATCH', path, { token: cpo.token, body: { kwh: 2, last_updated: '2026-01-01T00:00:00Z' } })).body.status_code, 1000);
    assert.equal((await send('PUT', path, { token: cpo.token, body: { ...session, total_cost: { excl_vat: 1 } } })).body.status_code, 2001);
    // cdr_example.json's Tariff lacks the required tax_included (mod_tariffs.asciidoc Tariff object): completed.
    const example = example230('cdr_example.json');
    const cdr: Json = { ...example, cdr_token: cdrToken, tariffs: (example['tariffs'] as Json[]).map((t) => ({ ...t, tax_included: 'NO' })) };
    const posted = await send('POST', '/ocpi/2.3.0/cdrs', { token: cpo.token, body: cdr });
    assert.equal(posted.body.status_code, 1000, posted.text);
    assert.equal((await send('GET', `/ocpi/2.3.0/cdrs/BE/BEC/${String(cdr['id'])}`, { token: cpo.token })).body.status_code, 1000);
    assert.equal((await send('GET', '/ocpi/2.3.0/cdrs/BE/BEC/NOPE', { token: cpo.token })).status, 404);
    assert.deepEqual(problems, []);
  });

  it('tokens: pushes, pulls, details, real-time authorization both ways and refusals', async () => {
    const token: Json = { ...example230('token_example_2_full_rfid.json'), country_code: 'NL', party_id: 'TST', uid: 'TOK1' };
    const path = '/ocpi/2.3.0/tokens/NL/TST/TOK1';
    assert.equal((await send('PUT', path, { token: emsp.token, body: token })).body.status_code, 1000);
    assert.equal((await send('PATCH', path, { token: emsp.token, body: { valid: false, last_updated: '2026-01-01T00:00:00Z' } })).body.status_code, 1000);
    assert.equal((await send('PUT', '/ocpi/2.3.0/tokens/NL/TST/TOK2', { token: emsp.token, body: { ...token, uid: 'TOK2', type: 'EMAID' } })).body.status_code, 2001);
    assert.equal((await send('DELETE', path, { token: emsp.token })).status, 405);
    await until('the token in a 2.3.0 pull', async () => ((await send('GET', '/ocpi/2.3.0/tokens?limit=5', { token: cpo.token })).body.data as Json[]).length > 0);
    assert.equal((await send('GET', path, { token: cpo.token })).body.status_code, 1000);
    assert.equal((await send('POST', '/ocpi/2.3.0/tokens/TOK1/authorize', { token: cpo.token, body: { location_id: 'LOC1' } })).body.status_code, 1000);
    const asked = await send('PUT', `${path}/authorize`, { token: emsp.token, headers: { 'OCPI-to-country-code': 'BE', 'OCPI-to-party-id': 'BEC' }, body: { location_id: 'LOC1' } });
    assert.equal(asked.body.status_code, 1000, asked.text);
    assert.deepEqual(problems, []);
  });

  it("a 2.2.1 eMSP's command reaches the 2.3.0 CPO, whose CommandResult comes to the hub's 2.3.0 callback", async () => {
    cpo.partner.commandAnswer = 'ACCEPTED';
    cpo.partner.commandResult = 'none';
    const token = { country_code: 'DE', party_id: 'OLD', uid: 'TOKEN1', type: 'RFID', contract_id: 'DE-OLD-C1', issuer: 'OLD', valid: true, whitelist: 'ALWAYS', last_updated: '2026-01-01T10:00:00Z' };
    const accepted = await call(hub, 'POST', '/ocpi/2.2.1/commands/START_SESSION', {
      token: emsp221.token,
      headers: { 'OCPI-from-country-code': 'DE', 'OCPI-from-party-id': 'OLD' },
      body: { response_url: `${emsp221.partner.baseUrl}/ocpi/2.2.1/command-results/c1`, token, location_id: String(location230['id']), evse_uid: '3256' },
    });
    assert.equal((accepted.body.data as Json | undefined)?.['result'], 'ACCEPTED', accepted.text);
    const callback = String(await until('the command forwarded to the CPO', () => cpo.partner.commands.at(-1)?.body['response_url']));
    assert.match(callback, /\/ocpi\/2\.3\.0\/commands\/callback\//);
    assert.equal((await send('POST', new URL(callback).pathname, { body: { result: 'MAYBE' } })).body.status_code, 2001);
    assert.equal((await send('POST', new URL(callback).pathname, { body: { result: 'ACCEPTED' } })).body.status_code, 1000);
    assert.deepEqual(problems, []);
  });

  it("a 2.3.0 eMSP's commands: accepted, refused (2001), and to a CPO that does not answer", async () => {
    cpo.partner.commandAnswer = 'ACCEPTED';
    cpo.partner.commandResult = 'none';
    const headers = { 'OCPI-to-country-code': 'BE', 'OCPI-to-party-id': 'BEC' };
    const stop = { response_url: `${emsp.partner.baseUrl}/ocpi/2.3.0/command-results/s1`, session_id: 'S1' };
    const accepted = await send('POST', '/ocpi/2.3.0/commands/STOP_SESSION', { token: emsp.token, headers, body: stop });
    assert.equal((accepted.body.data as Json | undefined)?.['result'], 'ACCEPTED', accepted.text);
    assert.equal((await send('POST', '/ocpi/2.3.0/commands/STOP_SESSION', { token: emsp.token, headers, body: { response_url: stop.response_url } })).body.status_code, 2001);
    assert.deepEqual(problems, []);
  });

  it('chargingprofiles: the eMSP interface, the CPO sender interface and the callback answer as documented', async () => {
    const url = `${emsp.partner.baseUrl}/ocpi/2.3.0/chargingprofile-results/p1`;
    const profile = { charging_rate_unit: 'A', charging_profile_period: [{ start_period: 0, limit: 16 }] };
    // The sessions test pushed session 101 for NL/TST; whether it was delivered yet or not, each answer is a documented one.
    await send('PUT', '/ocpi/2.3.0/chargingprofiles/101', { token: emsp.token, body: { charging_profile: profile, response_url: url } });
    await send('GET', `/ocpi/2.3.0/chargingprofiles/101?duration=60&response_url=${encodeURIComponent(url)}`, { token: emsp.token });
    await send('DELETE', `/ocpi/2.3.0/chargingprofiles/101?response_url=${encodeURIComponent(url)}`, { token: emsp.token });
    await send('PUT', '/ocpi/2.3.0/chargingprofiles/sender/101', { token: cpo.token, body: { start_date_time: '2026-01-01T00:00:00Z', charging_profile: profile } });
    assert.equal((await send('POST', '/ocpi/2.3.0/chargingprofiles/callback/00000000-0000-4000-8000-000000000000', { body: { result: 'ACCEPTED' } })).status, 404);
    assert.deepEqual(problems, []);
  });

  it('called every 2.3.0 operation of the document', () => {
    const documented = Object.entries(doc('openapi.json')['paths'] as Record<string, Json>)
      .filter(([path]) => path.startsWith('/ocpi/2.3.0'))
      .flatMap(([path, ops]) => Object.keys(ops).filter((m) => !m.startsWith('x-')).map((m) => `${m.toUpperCase()} ${path}`));
    assert.ok(documented.length >= 19);
    assert.deepEqual(documented.filter((op) => !covered.has(op)), [], 'every documented 2.3.0 operation was called at least once');
  });
});
