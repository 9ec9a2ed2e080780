// Contract test of the OCPI 2.1.1 edge: every /ocpi/2.1.1 operation of docs/openapi.json is called
// through the real ingress, projector and dispatcher by 2.1.1 partners, and every answer is checked
// against the document (path template, method, HTTP status, headers, envelope with 2.1.1 status codes,
// data schema of schemas/ocpi-2.1.1). test/contract.e2e.test.ts does the same for the 2.2.1 operations.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, beforeEach, describe, it } from 'node:test';
import { openApiContract, type ObservedResponse } from '@hub/schemas/api-doc-contract';
import { call, createTestStack, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { example211, freePort, hubctl, onboard211, type OnboardedPlatform } from './helpers.ts';

type Json = Record<string, unknown>;
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
const doc = (name: string) => JSON.parse(readFileSync(new URL(`../docs/${name}`, import.meta.url), 'utf8')) as Json;
const location211 = example211('mod_locations.md', '### 3.1 _Location_ Object');

describe('contract: the OCPI 2.1.1 operations answer as docs/openapi.json says', () => {
  const openapi = openApiContract(doc('openapi.json'));
  let stack: TestStack;
  let services: ServiceProcess[] = [];
  let hub: string;
  let env: Record<string, string>;
  let cpo: OnboardedPlatform;
  let emsp: OnboardedPlatform;
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
    stack = await createTestStack('contract211');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1' });
    services = [
      await startService('ingress', env, /ingress listening/),
      await startService('projector', env, /projector running/),
      await startService('dispatcher', env, /dispatcher running/, 60_000),
    ];
    cpo = await onboard211(hub, env, 'Contract CPO', { role: 'CPO', countryCode: 'BE', partyId: 'BEC' }, [{ identifier: 'credentials', role: 'SENDER' }, { identifier: 'tokens', role: 'RECEIVER' }, { identifier: 'commands', role: 'RECEIVER' }]);
    emsp = await onboard211(hub, env, 'Contract eMSP', { role: 'EMSP', countryCode: 'NL', partyId: 'TST' }, [{ identifier: 'credentials', role: 'SENDER' }, { identifier: 'sessions', role: 'RECEIVER' }, { identifier: 'cdrs', role: 'RECEIVER' }, { identifier: 'tokens', role: 'SENDER' }]);
    assert.equal((await hubctl(env, ['routing', 'enable', '--emsp', 'NL/TST', '--cpo', 'BE/BEC'])).code, 0);
  });

  beforeEach(() => {
    problems.length = 0;
  });

  after(async () => {
    await Promise.allSettled([...services.map((s) => s.stop()), cpo?.partner.close(), emsp?.partner.close()]);
    await stack?.cleanup();
  });

  it('versions and credentials', async () => {
    assert.equal((await send('GET', '/ocpi/2.1.1', { token: cpo.token })).body.status_code, 1000);
    assert.equal((await send('GET', '/ocpi/2.1.1/credentials', { token: cpo.token })).body.status_code, 1000);
    const again = { token: cpo.partner.token, url: cpo.partner.versionsUrl, party_id: 'BEC', country_code: 'BE', business_details: { name: 'Contract CPO' } };
    assert.equal((await send('POST', '/ocpi/2.1.1/credentials', { token: cpo.token, body: again })).status, 405);
    const rotated = await send('PUT', '/ocpi/2.1.1/credentials', { token: cpo.token, body: again });
    assert.equal(rotated.body.status_code, 1000, rotated.text);
    cpo = { ...cpo, token: String((rotated.body.data as Json)['token']) };
    // A throwaway 2.1.1 party registers and unregisters.
    const other = await onboard211(hub, env, 'Leaving CPO', { role: 'CPO', countryCode: 'FR', partyId: 'BYE' });
    assert.equal((await send('DELETE', '/ocpi/2.1.1/credentials', { token: other.token })).body.status_code, 1000);
    await other.partner.close();
    assert.deepEqual(problems, []);
  });

  it('locations, tariffs: pushes, details, pulls and refusals', async () => {
    const loc = '/ocpi/2.1.1/locations/BE/BEC/LOC1';
    assert.equal((await send('PUT', loc, { token: cpo.token, body: location211 })).body.status_code, 1000);
    assert.equal((await send('PATCH', loc, { token: cpo.token, body: { name: 'Renamed' } })).body.status_code, 1000);
    const evse = (location211['evses'] as Json[])[0] as Json;
    assert.equal((await send('PUT', `${loc}/3256`, { token: cpo.token, body: evse })).body.status_code, 1000);
    assert.equal((await send('PATCH', `${loc}/3256`, { token: cpo.token, body: { status: 'CHARGING' } })).body.status_code, 1000);
    const connector = (evse['connectors'] as Json[])[0] as Json;
    assert.equal((await send('PUT', `${loc}/3256/1`, { token: cpo.token, body: connector })).body.status_code, 1000);
    assert.equal((await send('PATCH', `${loc}/3256/1`, { token: cpo.token, body: { tariff_id: '12' } })).body.status_code, 1000);
    for (const path of [loc, `${loc}/3256`, `${loc}/3256/1`]) {
      assert.equal((await send('GET', path, { token: cpo.token })).body.status_code, 1000);
      assert.equal((await send('DELETE', path, { token: cpo.token })).status, 405);
    }
    assert.equal((await send('PUT', '/ocpi/2.1.1/locations/BE/BEC/LOC2', { token: cpo.token, body: { ...location211, id: 'LOC2', type: 5 } })).body.status_code, 2001);
    const tariff = { id: '12', currency: 'EUR', elements: [{ price_components: [{ type: 'ENERGY', price: 0.25, step_size: 1 }] }], last_updated: '2026-01-01T00:00:00Z' };
    const tariffPath = '/ocpi/2.1.1/tariffs/BE/BEC/12';
    assert.equal((await send('PUT', tariffPath, { token: cpo.token, body: tariff })).body.status_code, 1000);
    // mod_tariffs.md 2.2.3 (2.1.1 has a tariff PATCH): its example, the price changed to 2.50.
    const change = { elements: [{ price_components: [{ type: 'TIME', price: 2.5, step_size: 300 }] }] };
    const patchAnswer = await send('PATCH', tariffPath, { token: cpo.token, body: change });
    assert.equal(patchAnswer.body.status_code, 1000, JSON.stringify([patchAnswer.status, patchAnswer.body]));
    const unknown = await send('PATCH', '/ocpi/2.1.1/tariffs/BE/BEC/NOPE', { token: cpo.token, body: change });
    assert.deepEqual([unknown.status, unknown.body.status_code], [404, 2000]);
    assert.equal((await send('PATCH', tariffPath, { token: cpo.token, body: { currency: 'EURO' } })).body.status_code, 2001);
    const patched = await send('GET', tariffPath, { token: cpo.token });
    assert.equal(patched.body.status_code, 1000);
    assert.deepEqual((patched.body.data as Json)['elements'], change.elements);
    assert.equal((patched.body.data as Json)['currency'], 'EUR');
    for (let i = 0; i < 50; i++) {
      const list = await send('GET', '/ocpi/2.1.1/locations?limit=1', { token: emsp.token });
      if ((list.body.data as unknown[]).length === 1) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal((await send('GET', '/ocpi/2.1.1/tariffs', { token: emsp.token })).body.status_code, 1000);
    // The eMSP reads a Location and an EVSE by their ids alone (mod_locations.md 2.1.2, 2.1.1).
    assert.equal((await send('GET', '/ocpi/2.1.1/locations/LOC1', { token: emsp.token })).body.status_code, 1000);
    assert.equal((await send('GET', '/ocpi/2.1.1/locations/LOC1/3256', { token: emsp.token })).body.status_code, 1000);
    assert.equal((await send('GET', '/ocpi/2.1.1/locations/NOPE', { token: emsp.token })).body.status_code, 2003);
    assert.equal((await send('DELETE', tariffPath, { token: cpo.token })).body.status_code, 1000);
    assert.deepEqual(problems, []);
  });

  it('tokens, sessions, CDRs, authorization and commands', async () => {
    const token = { uid: 'T1', type: 'RFID', auth_id: 'NL-TST-C00000001-1', issuer: 'Contract eMSP', valid: true, whitelist: 'ALLOWED', last_updated: '2026-01-01T00:00:00Z' };
    const tokenPath = '/ocpi/2.1.1/tokens/NL/TST/T1';
    assert.equal((await send('PUT', tokenPath, { token: emsp.token, body: token })).body.status_code, 1000);
    for (let i = 0; i < 50; i++) {
      if ((await call(hub, 'GET', tokenPath, { token: emsp.token })).body.status_code === 1000) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal((await send('PATCH', tokenPath, { token: emsp.token, body: { valid: false } })).body.status_code, 1000);
    assert.equal((await send('GET', tokenPath, { token: emsp.token })).body.status_code, 1000);
    assert.equal((await send('DELETE', tokenPath, { token: emsp.token })).status, 405);
    assert.equal((await send('GET', '/ocpi/2.1.1/tokens', { token: cpo.token })).body.status_code, 1000);
    assert.equal((await call(hub, 'PUT', `${tokenPath}/authorize`, { token: emsp.token, body: {} })).status, 404, 'no such URL in 2.1.1');
    emsp.partner.authorizeAnswer = 'ALLOWED';
    assert.equal((await send('POST', '/ocpi/2.1.1/tokens/T1/authorize', { token: cpo.token, body: { location_id: 'LOC1' } })).body.status_code, 1000);
    assert.equal((await send('POST', '/ocpi/2.1.1/tokens/NOPE/authorize', { token: cpo.token })).body.status_code, 2000);

    const evse = (location211['evses'] as Json[])[0] as Json;
    const place = { ...location211, evses: [{ ...evse, connectors: (evse['connectors'] as Json[]).slice(0, 1) }] };
    const session = { id: 'S1', start_datetime: '2026-01-01T10:00:00Z', kwh: 0, auth_id: 'NL-TST-C00000001-1', auth_method: 'WHITELIST', location: place, currency: 'EUR', status: 'ACTIVE', last_updated: '2026-01-01T10:00:00Z' };
    assert.equal((await send('PUT', '/ocpi/2.1.1/sessions/BE/BEC/S1', { token: cpo.token, body: session })).body.status_code, 1000);
    assert.equal((await send('PATCH', '/ocpi/2.1.1/sessions/BE/BEC/S1', { token: cpo.token, body: { kwh: 2 } })).body.status_code, 1000);
    const cdr = {
      id: 'C1', start_date_time: '2026-01-01T10:00:00Z', stop_date_time: '2026-01-01T11:00:00Z', auth_id: 'NL-TST-C00000001-1', auth_method: 'WHITELIST', location: place, currency: 'EUR',
      charging_periods: [{ start_date_time: '2026-01-01T10:00:00Z', dimensions: [{ type: 'ENERGY', volume: 2 }] }], total_cost: 0.5, total_energy: 2, total_time: 1, last_updated: '2026-01-01T11:00:00Z',
    };
    assert.equal((await send('POST', '/ocpi/2.1.1/cdrs', { token: cpo.token, body: cdr })).body.status_code, 1000);
    assert.equal((await send('GET', '/ocpi/2.1.1/cdrs/BE/BEC/C1', { token: cpo.token })).body.status_code, 1000);

    cpo.partner.commandAnswer = 'ACCEPTED';
    cpo.partner.commandResult = 'none';
    const start = { response_url: `${emsp.partner.baseUrl}/ocpi/2.1.1/command-results/1`, token, location_id: 'LOC1', evse_uid: '3256' };
    assert.equal((await send('POST', '/ocpi/2.1.1/commands/START_SESSION', { token: emsp.token, body: start })).body.status_code, 1000);
    const callback = String(cpo.partner.commands.at(-1)?.body['response_url']);
    assert.equal((await send('POST', new URL(callback).pathname, { body: { result: 'ACCEPTED' } })).body.status_code, 1000);
    assert.equal((await send('POST', new URL(callback).pathname, { body: { result: 'MAYBE' } })).body.status_code, 2001);
    assert.deepEqual(problems, []);
  });

  it('called every 2.1.1 operation of the document', () => {
    const documented = Object.entries(doc('openapi.json')['paths'] as Record<string, Json>)
      .filter(([path]) => path.startsWith('/ocpi/2.1.1'))
      .flatMap(([path, ops]) => Object.keys(ops).filter((m) => !m.startsWith('x-')).map((m) => `${m.toUpperCase()} ${path}`));
    assert.ok(documented.length > 30);
    assert.deepEqual(documented.filter((op) => !covered.has(op)), [], 'every documented 2.1.1 operation was called at least once');
  });

  it('nothing the hub sent a 2.1.1 partner breaks the 2.1.1 schemas (schemas/ocpi-2.1.1)', () => {
    assert.ok(emsp.partner.received.length + emsp.partner.commands.length > 0 || emsp.partner.requests.length > 0);
    assert.deepEqual(emsp.partner.violations211, []);
    assert.ok(cpo.partner.received.length + cpo.partner.commands.length > 0 || cpo.partner.requests.length > 0);
    assert.deepEqual(cpo.partner.violations211, []);
  });
});
