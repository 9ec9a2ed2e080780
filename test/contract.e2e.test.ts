// Contract test: drives the partner API through the real ingress, projector
// and dispatcher and checks every answer against docs/openapi.json (path template, method, HTTP
// status, required and contract headers, envelope and data schema) and every event the requests
// appended against docs/asyncapi.json (channel of the topic, message by ce_type, headers, key,
// value). The documents are generated from the code's catalogue and schemas; this is what keeps them
// true of the running hub.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, beforeEach, describe, it } from 'node:test';
import { topics } from '@hub/events';
import { asyncApiContract, openApiContract, type ObservedResponse } from '@hub/schemas/api-doc-contract';
import { call, createTestStack, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { freePort, hubctl, onboard, readTopic, until, type OnboardedPlatform, ocpiExample } from './helpers.ts';

type Json = Record<string, unknown>;
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
const example = ocpiExample;
const doc = (name: string) => JSON.parse(readFileSync(new URL(`../docs/${name}`, import.meta.url), 'utf8')) as Json;

describe('contract: real answers and events match docs/openapi.json and docs/asyncapi.json', () => {
  const openapi = openApiContract(doc('openapi.json'));
  const asyncapi = asyncApiContract(doc('asyncapi.json'));
  let stack: TestStack;
  let services: ServiceProcess[] = [];
  let hub: string;
  let env: Record<string, string>;
  let cpo: OnboardedPlatform;
  let emsp: OnboardedPlatform;
  /** "METHOD template HTTP-status OCPI-status" of every checked answer. */
  const covered = new Set<string>();
  const problems: string[] = [];

  /** One request as a partner makes it, its answer checked against the document. */
  async function send(method: Method, path: string, options: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {}) {
    const res = await call<unknown>(hub, method, path, options);
    const observed: ObservedResponse = { method, path: path.split('?')[0] ?? path, status: res.status, headers: res.headers, body: res.body };
    problems.push(...openapi.check(observed));
    covered.add(`${method} ${openapi.template(observed.path) ?? path} ${res.status} ${res.body.status_code}`);
    return res;
  }

  before(async () => {
    stack = await createTestStack('contract');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', PAGE_LIMIT_MAX: '50' });
    services = [
      await startService('ingress', env, /ingress listening/),
      await startService('projector', env, /projector running/),
      await startService('dispatcher', env, /dispatcher running/, 60_000),
    ];
    const cpoModules = [{ identifier: 'credentials', role: 'SENDER' as const }, { identifier: 'commands', role: 'RECEIVER' as const }, { identifier: 'tokens', role: 'RECEIVER' as const }, { identifier: 'chargingprofiles', role: 'RECEIVER' as const }];
    cpo = await onboard(hub, env, 'Contract CPO', [{ role: 'CPO', countryCode: 'BE', partyId: 'BEC' }, { role: 'CPO', countryCode: 'DE', partyId: 'ALL' }], cpoModules);
    emsp = await onboard(hub, env, 'Contract eMSP', [{ role: 'EMSP', countryCode: 'NL', partyId: 'TST' }, { role: 'EMSP', countryCode: 'DE', partyId: 'TNM' }]);
    for (const [e, c] of [['NL/TST', 'BE/BEC'], ['NL/TST', 'DE/ALL'], ['DE/TNM', 'BE/BEC']]) {
      assert.equal((await hubctl(env, ['routing', 'enable', '--emsp', String(e), '--cpo', String(c)])).code, 0);
    }
  });

  // Each test asserts on the problems of its own requests.
  beforeEach(() => {
    problems.length = 0;
  });

  after(async () => {
    await Promise.allSettled([...services.map((s) => s.stop()), cpo?.partner.close(), emsp?.partner.close()]);
    await stack?.cleanup();
  });

  it('versions, credentials and hubclientinfo answers match the document', async () => {
    for (const token of [cpo.token, emsp.token]) {
      assert.equal((await send('GET', '/ocpi/versions', { token })).body.status_code, 1000);
      assert.equal((await send('GET', '/ocpi/2.2.1', { token, headers: { 'X-Request-ID': 'req-1', 'X-Correlation-ID': 'corr-1' } })).body.status_code, 1000);
      assert.equal((await send('GET', '/ocpi/2.2.1/credentials', { token })).body.status_code, 1000);
    }
    // Registered already: POST is 405 (credentials.asciidoc); PATCH is no credentials method.
    const again = { token: 'x', url: cpo.partner.versionsUrl, roles: [{ role: 'CPO', country_code: 'BE', party_id: 'BEC', business_details: { name: 'Contract CPO' } }] };
    assert.equal((await send('POST', '/ocpi/2.2.1/credentials', { token: cpo.token, body: again })).status, 405);
    assert.equal((await send('POST', '/ocpi/2.2.1/credentials', { token: cpo.token, body: { ...again, roles: [] } })).body.status_code, 2001);
    assert.equal((await send('PATCH', '/ocpi/2.2.1/credentials', { token: cpo.token, body: {} })).status, 405);
    const page = await send('GET', '/ocpi/2.2.1/hubclientinfo?limit=1', { token: emsp.token });
    assert.equal(page.body.status_code, 1000);
    assert.ok(page.headers['x-total-count'] && page.headers['x-limit'] && page.headers['link'], 'a first page of several carries the pagination headers');
    assert.equal((await send('GET', '/ocpi/2.2.1/hubclientinfo?limit=x', { token: emsp.token })).body.status_code, 2001);
    // Refusals before any module: no token, an unknown token (401); an unknown path (404).
    assert.equal((await send('GET', '/ocpi/2.2.1')).status, 401);
    assert.equal((await send('GET', '/ocpi/2.2.1/locations', { token: 'no-such-token' })).status, 401);
    assert.deepEqual(problems, []);
  });

  it('locations and tariffs: pushes, refusals, details and paginated pulls match the document', async () => {
    const location = example('location_example.json'); // BE/BEC/LOC1, EVSEs 3256 (connectors 1, 2) and 3257
    const loc = '/ocpi/2.2.1/locations/BE/BEC/LOC1';
    assert.equal((await send('PUT', loc, { token: cpo.token, body: location })).body.status_code, 1000);
    assert.equal((await send('PATCH', loc, { token: cpo.token, body: { name: 'Renamed', last_updated: '2026-01-01T10:00:00Z' } })).body.status_code, 1000);
    const evse = (location['evses'] as Json[])[0] as Json;
    assert.equal((await send('PUT', `${loc}/3256`, { token: cpo.token, body: { ...evse, last_updated: '2026-01-01T10:01:00Z' } })).body.status_code, 1000);
    assert.equal((await send('PATCH', `${loc}/3256`, { token: cpo.token, body: { status: 'CHARGING', last_updated: '2026-01-01T10:02:00Z' } })).body.status_code, 1000);
    const connector = (evse['connectors'] as Json[])[0] as Json;
    assert.equal((await send('PUT', `${loc}/3256/1`, { token: cpo.token, body: { ...connector, last_updated: '2026-01-01T10:03:00Z' } })).body.status_code, 1000);
    assert.equal((await send('PATCH', `${loc}/3256/1`, { token: cpo.token, body: { max_voltage: 230, last_updated: '2026-01-01T10:04:00Z' } })).body.status_code, 1000);
    // Refusals: invalid body (2001), unknown parent (2003), foreign party (403), no DELETE (405), bad JSON (400).
    assert.equal((await send('PUT', '/ocpi/2.2.1/locations/BE/BEC/LOC2', { token: cpo.token, body: { ...location, id: 'LOC2', address: 5 } })).body.status_code, 2001);
    assert.equal((await send('PATCH', '/ocpi/2.2.1/locations/BE/BEC/NOPE/1', { token: cpo.token, body: { status: 'AVAILABLE', last_updated: '2026-01-01T10:00:00Z' } })).body.status_code, 2003);
    assert.equal((await send('PUT', '/ocpi/2.2.1/locations/FR/XXX/LOC1', { token: cpo.token, body: { ...location, country_code: 'FR', party_id: 'XXX' } })).status, 403);
    for (const level of [loc, `${loc}/3256`, `${loc}/3256/1`]) assert.equal((await send('DELETE', level, { token: cpo.token })).status, 405);
    assert.equal((await send('PUT', loc, { token: cpo.token, rawBody: '{"id":' })).status, 400);

    const tariffs = ['tariff_10_025kwh_parking_start.json', 'tariff_11_not_possible_alt_text.json', 'tariff_12_025kwh_min_price.json'].map(example);
    for (const t of tariffs) {
      const res = await send('PUT', `/ocpi/2.2.1/tariffs/${String(t['country_code'])}/${String(t['party_id'])}/${String(t['id'])}`, { token: cpo.token, body: t });
      assert.equal(res.body.status_code, 1000, res.text);
    }
    const first = tariffs[0] as Json;
    const tariffPath = `/ocpi/2.2.1/tariffs/${String(first['country_code'])}/${String(first['party_id'])}/${String(first['id'])}`;
    assert.equal((await send('PATCH', tariffPath, { token: cpo.token, body: {} })).status, 405);

    // Details as the owner (read-your-writes) and pulls as the routed eMSP, page by page.
    assert.equal((await send('GET', loc, { token: cpo.token })).body.status_code, 1000);
    assert.equal((await send('GET', `${loc}/3256`, { token: cpo.token })).body.status_code, 1000);
    assert.equal((await send('GET', `${loc}/3256/1`, { token: cpo.token })).body.status_code, 1000);
    assert.equal((await send('GET', tariffPath, { token: cpo.token })).body.status_code, 1000);
    assert.equal((await send('GET', '/ocpi/2.2.1/locations/BE/BEC/NOPE', { token: cpo.token })).status, 404);
    await until('tariffs projected for the eMSP', async () => Number((await send('GET', '/ocpi/2.2.1/tariffs?limit=1', { token: emsp.token })).headers['x-total-count']) >= tariffs.length);
    let next: string | undefined = '/ocpi/2.2.1/tariffs?limit=2';
    while (next) {
      const res = await send('GET', next, { token: emsp.token, headers: { 'OCPI-from-country-code': 'NL', 'OCPI-from-party-id': 'TST' } });
      assert.equal(res.body.status_code, 1000, res.text);
      const link = /<([^>]+)>;\s*rel="next"/.exec(res.headers['link'] ?? '')?.[1];
      next = link ? `${new URL(link).pathname}${new URL(link).search}` : undefined;
    }
    assert.equal((await send('GET', '/ocpi/2.2.1/locations?date_from=yesterday', { token: emsp.token })).body.status_code, 2001);
    await until('location projected for the eMSP', async () => (await send('GET', '/ocpi/2.2.1/locations', { token: emsp.token })).headers['x-total-count'] === '1');
    assert.equal((await send('DELETE', tariffPath, { token: cpo.token })).body.status_code, 1000);
    assert.equal((await send('DELETE', '/ocpi/2.2.1/tariffs/DE/ALL/NOPE', { token: cpo.token })).status, 404);
    assert.deepEqual(problems, []);
  });

  it('sessions, CDRs, token authorization, commands and the callback match the document', async () => {
    const session = { ...example('session_example_2_short_finished.json'), id: 'CS-1', status: 'ACTIVE', last_updated: '2026-01-01T10:00:00Z' };
    const sessionPath = '/ocpi/2.2.1/sessions/BE/BEC/CS-1';
    assert.equal((await send('PUT', sessionPath, { token: cpo.token, body: session })).body.status_code, 1000);
    assert.equal((await send('PATCH', sessionPath, { token: cpo.token, body: { kwh: 3.5, last_updated: '2026-01-01T10:05:00Z' } })).body.status_code, 1000);
    assert.equal((await send('PATCH', '/ocpi/2.2.1/sessions/BE/BEC/NOPE', { token: cpo.token, body: { kwh: 1, last_updated: '2026-01-01T10:05:00Z' } })).status, 404);
    assert.equal((await send('PUT', '/ocpi/2.2.1/sessions/BE/BEC/CS-2', { token: emsp.token, body: { ...session, id: 'CS-2' } })).status, 403);

    const cdr = example('cdr_example.json'); // BE/BEC/12345 for DE/TNM
    const posted = await send('POST', '/ocpi/2.2.1/cdrs', { token: cpo.token, body: cdr });
    assert.equal(posted.body.status_code, 1000, posted.text);
    assert.ok(posted.headers['location'], 'the CDR POST answer carries Location');
    assert.equal((await send('POST', '/ocpi/2.2.1/cdrs', { token: cpo.token, body: { ...cdr, total_energy: 1 } })).body.status_code, 2001);
    assert.equal((await send('GET', '/ocpi/2.2.1/cdrs/BE/BEC/12345', { token: cpo.token })).body.status_code, 1000);
    assert.equal((await send('GET', '/ocpi/2.2.1/cdrs/BE/BEC/NOPE', { token: cpo.token })).status, 404);

    // Forwarded to the CPO (its simulator answers): an authorization and a command, whose result the
    // CPO then posts to the hub's callback; a second result for the same command is refused.
    const allowed = await send('PUT', '/ocpi/2.2.1/tokens/NL/TST/TOKEN1/authorize', { token: emsp.token, body: { location_id: 'LOC1' } });
    assert.equal((allowed.body.data as Json | undefined)?.['allowed'], 'ALLOWED', allowed.text);
    const commandToken = { country_code: 'NL', party_id: 'TST', uid: 'TOKEN1', type: 'RFID', contract_id: 'NL-TST-C1', issuer: 'TST', valid: true, whitelist: 'ALWAYS', last_updated: '2026-01-01T10:00:00Z' };
    const accepted = await send('POST', '/ocpi/2.2.1/commands/START_SESSION', { token: emsp.token, headers: { 'OCPI-from-country-code': 'NL', 'OCPI-from-party-id': 'TST' }, body: { response_url: `${emsp.partner.baseUrl}/ocpi/2.2.1/command-results/c1`, token: commandToken, location_id: 'LOC1', evse_uid: '3256' } });
    assert.equal((accepted.body.data as Json | undefined)?.['result'], 'ACCEPTED', accepted.text);
    const callback = await until('the command forwarded to the CPO', () => cpo.partner.commands.at(-1)?.body['response_url']);
    const resultReceived = (rs: ReadonlyArray<{ headers: Record<string, string> }>) => rs.some((r) => r.headers['ce_type'] === 'ocpi.commands.result-received.v1');
    await until('the CPO posted its result', async () => resultReceived(await readTopic(stack, topics.commands, resultReceived, 2_000)));
    assert.notEqual((await send('POST', new URL(String(callback)).pathname, { body: { result: 'ACCEPTED' } })).body.status_code, 1000);
    // Token authorization for a location no routed CPO has: 2003 (no CPO to ask).
    assert.equal((await send('PUT', '/ocpi/2.2.1/tokens/NL/TST/TOKEN1/authorize', { token: emsp.token, body: { location_id: 'NOPE' } })).body.status_code, 2003);
    assert.equal((await send('PUT', '/ocpi/2.2.1/tokens/FR/XXX/TOKEN1/authorize', { token: emsp.token, body: {} })).status, 403);
    // CPO-initiated authorization (mod_tokens.asciidoc, Sender interface) to the eMSP's tokens sender
    // (here an operator override): its answer; a token no routed eMSP pushed (404, 2004); no endpoint (4001).
    const fromCpo = { 'OCPI-from-country-code': 'BE', 'OCPI-from-party-id': 'BEC' };
    const toTst = { 'OCPI-to-country-code': 'NL', 'OCPI-to-party-id': 'TST' };
    assert.equal((await send('POST', '/ocpi/2.2.1/tokens/TOKEN1/authorize', { token: cpo.token, headers: { ...fromCpo, ...toTst } })).body.status_code, 4001);
    assert.equal((await hubctl(env, ['endpoint', 'set', '--country', 'NL', '--party', 'TST', '--role', 'EMSP', '--module', 'tokens', '--url', `${emsp.partner.baseUrl}/ocpi/2.2.1/tokens`])).code, 0);
    const cpoAsked = await send('POST', '/ocpi/2.2.1/tokens/TOKEN1/authorize?type=RFID', { token: cpo.token, headers: { ...fromCpo, ...toTst }, body: { location_id: 'LOC1' } });
    assert.equal((cpoAsked.body.data as Json | undefined)?.['allowed'], 'ALLOWED', cpoAsked.text);
    assert.equal((await send('POST', '/ocpi/2.2.1/tokens/TOKEN1/authorize', { token: cpo.token, headers: fromCpo })).status, 404);
    // Commands: an unsupported command (2001); one for an unknown location (REJECTED, 1000).
    const headers = { 'OCPI-from-country-code': 'NL', 'OCPI-from-party-id': 'TST' };
    assert.equal((await send('POST', '/ocpi/2.2.1/commands/SELF_DESTRUCT', { token: emsp.token, body: {}, headers })).body.status_code, 2001);
    const rejected = await send('POST', '/ocpi/2.2.1/commands/START_SESSION', { token: emsp.token, headers, body: { response_url: `${emsp.partner.baseUrl}/ocpi/2.2.1/command-results/c2`, token: commandToken, location_id: 'NOPE' } });
    assert.equal((rejected.body.data as Json | undefined)?.['result'], 'REJECTED', rejected.text);
    assert.equal((await send('POST', '/ocpi/2.2.1/commands/callback/00000000-0000-4000-8000-000000000000', { body: { result: 'ACCEPTED' } })).status, 404);
    assert.deepEqual(problems, []);
  });

  it('charging profiles: set, get, clear, the callback and the CPO update match the document', async () => {
    // The session CS-1 (pushed above, delivered to NL/TST) is the one the profiles are for.
    await until('session CS-1 held', async () => (await stack.pool.query("select 1 from deliveries where kind = 'session' and object_id = 'CS-1'")).rows.length > 0);
    const headers = { 'OCPI-from-country-code': 'NL', 'OCPI-from-party-id': 'TST' };
    const resultUrl = (id: string) => encodeURIComponent(`${emsp.partner.baseUrl}/ocpi/2.2.1/chargingprofile-results/${id}`);
    const chargingProfile = { charging_rate_unit: 'A', charging_profile_period: [{ start_period: 0, limit: 16 }] };
    const set = await send('PUT', '/ocpi/2.2.1/chargingprofiles/CS-1', { token: emsp.token, headers, body: { charging_profile: chargingProfile, response_url: decodeURIComponent(resultUrl('p1')) } });
    assert.equal((set.body.data as Json | undefined)?.['result'], 'ACCEPTED', set.text);
    assert.equal((await send('GET', `/ocpi/2.2.1/chargingprofiles/CS-1?duration=900&response_url=${resultUrl('p2')}`, { token: emsp.token, headers })).body.status_code, 1000);
    assert.equal((await send('DELETE', `/ocpi/2.2.1/chargingprofiles/CS-1?response_url=${resultUrl('p3')}`, { token: emsp.token, headers })).body.status_code, 1000);
    const resultReceived = (rs: ReadonlyArray<{ headers: Record<string, string> }>) => rs.filter((r) => r.headers['ce_type'] === 'ocpi.chargingprofiles.result-received.v1').length >= 3;
    await until('the CPO posted its results', async () => resultReceived(await readTopic(stack, topics.chargingProfiles, resultReceived, 2_000)));
    const callback = String(cpo.partner.profileRequests[0]?.body?.['response_url']);
    assert.equal((await send('POST', new URL(callback).pathname, { body: { result: 'ACCEPTED' } })).status, 404, 'used once');
    // Refusals: a bad profile (2001), an unknown session (404), an unknown callback id (404).
    assert.equal((await send('PUT', '/ocpi/2.2.1/chargingprofiles/CS-1', { token: emsp.token, headers, body: { charging_profile: { charging_rate_unit: 'kW' }, response_url: decodeURIComponent(resultUrl('p4')) } })).body.status_code, 2001);
    assert.equal((await send('DELETE', `/ocpi/2.2.1/chargingprofiles/NOPE?response_url=${resultUrl('p5')}`, { token: emsp.token, headers })).status, 404);
    assert.equal((await send('POST', '/ocpi/2.2.1/chargingprofiles/callback/00000000-0000-4000-8000-000000000000', { body: { result: 'ACCEPTED' } })).status, 404);
    // The CPO's updated ActiveChargingProfile (Sender interface).
    const update = await send('PUT', '/ocpi/2.2.1/chargingprofiles/sender/CS-1', { token: cpo.token, headers: { 'OCPI-from-country-code': 'BE', 'OCPI-from-party-id': 'BEC' }, body: { start_date_time: '2026-01-01T10:10:00Z', charging_profile: chargingProfile } });
    assert.equal(update.body.status_code, 1000, update.text);
    assert.deepEqual(problems, []);
  });

  it('tokens: eMSP pushes, refusals, details and the CPO pull match the document', async () => {
    const token = { ...example('token_put_example.json'), country_code: 'NL', party_id: 'TST', uid: 'TOKEN9' };
    const path = '/ocpi/2.2.1/tokens/NL/TST/TOKEN9';
    assert.equal((await send('PUT', path, { token: emsp.token, body: token })).body.status_code, 1000);
    assert.equal((await send('PUT', `${path}?type=APP_USER`, { token: emsp.token, body: { ...token, type: 'APP_USER' }, headers: { 'OCPI-to-country-code': 'BE', 'OCPI-to-party-id': 'BEC' } })).body.status_code, 1000);
    assert.equal((await send('PATCH', path, { token: emsp.token, body: example('token_patch_example.json') })).body.status_code, 1000);
    // Refusals: another type's uid (404), a body of another uid (2001), a foreign party (403), an unrouted OCPI-to (4001), no DELETE (405).
    assert.equal((await send('PATCH', `${path}?type=OTHER`, { token: emsp.token, body: example('token_patch_example.json') })).status, 404);
    assert.equal((await send('PUT', path, { token: emsp.token, body: { ...token, uid: 'TOKEN8' } })).body.status_code, 2001);
    assert.equal((await send('PUT', '/ocpi/2.2.1/tokens/BE/BEC/TOKEN9', { token: cpo.token, body: { ...token, country_code: 'BE', party_id: 'BEC' } })).status, 403);
    assert.equal((await send('PUT', '/ocpi/2.2.1/tokens/DE/TNM/TOKEN9', { token: emsp.token, body: { ...token, country_code: 'DE', party_id: 'TNM' }, headers: { 'OCPI-to-country-code': 'DE', 'OCPI-to-party-id': 'ALL' } })).body.status_code, 4001);
    assert.equal((await send('DELETE', path, { token: emsp.token })).status, 405);
    // The owner's detail (read-your-writes), then the routed CPO's pull and detail.
    assert.equal((await send('GET', `${path}?type=APP_USER`, { token: emsp.token })).body.status_code, 1000);
    const page = await send('GET', '/ocpi/2.2.1/tokens?limit=1', { token: cpo.token, headers: { 'OCPI-from-country-code': 'BE', 'OCPI-from-party-id': 'BEC' } });
    assert.equal(page.body.status_code, 1000, page.text);
    assert.ok(page.headers['x-total-count'] === '2' && page.headers['link'], page.text);
    assert.equal((await send('GET', path, { token: cpo.token })).body.status_code, 1000);
    assert.equal((await send('GET', '/ocpi/2.2.1/tokens/NL/TST/NOPE', { token: cpo.token })).status, 404);
    assert.deepEqual(problems, []);
  });

  it('credentials PUT and DELETE (a third platform updates, then leaves) match the document', async () => {
    const leaving = await onboard(hub, env, 'Leaving CPO', [{ role: 'CPO', countryCode: 'FR', partyId: 'LVE' }]);
    try {
      const body = { token: leaving.partner.token, url: leaving.partner.versionsUrl, roles: [{ role: 'CPO', country_code: 'FR', party_id: 'LVE', business_details: { name: 'Leaving CPO' } }] };
      const updated = await send('PUT', '/ocpi/2.2.1/credentials', { token: leaving.token, body });
      assert.equal(updated.body.status_code, 1000, updated.text);
      const newToken = String((updated.body.data as Json)['token']);
      assert.equal((await send('DELETE', '/ocpi/2.2.1/credentials', { token: newToken })).body.status_code, 1000);
      assert.equal((await send('GET', '/ocpi/2.2.1/credentials', { token: newToken })).status, 401);
    } finally {
      await leaving.partner.close();
    }
    assert.deepEqual(problems, []);
  });

  it('a wrong answer would be caught: the checks refuse a mutated real response', async () => {
    const res = await call<unknown>(hub, 'GET', '/ocpi/2.2.1/credentials', { token: cpo.token });
    const observed: ObservedResponse = { method: 'GET', path: '/ocpi/2.2.1/credentials', status: res.status, headers: res.headers, body: res.body };
    assert.deepEqual(openapi.check(observed), []);
    const { 'x-request-id': _id, ...withoutId } = res.headers;
    assert.notDeepEqual(openapi.check({ ...observed, headers: withoutId }), []);
    assert.notDeepEqual(openapi.check({ ...observed, body: { ...(res.body as Json), data: { ...(res.body.data as Json), roles: 'HUB' } } }), []);
    assert.notDeepEqual(openapi.check({ ...observed, status: 418 }), []);
  });

  it('every event the requests appended validates against docs/asyncapi.json', async (t) => {
    const checked = new Map<string, number>();
    for (const topic of Object.values(topics)) {
      const end = [...(await stack.eventLog.latestOffsets(topic)).values()].reduce((a, b) => a + b, 0n);
      if (end === 0n) continue;
      const records = await readTopic(stack, topic, (rs) => BigInt(rs.length) >= end, 10_000);
      assert.equal(BigInt(records.length), end, `${topic}: read every record`);
      for (const r of records) {
        let value: unknown;
        try {
          // No value at all: a snapshot topic's tombstone (docs/decisions/0014-snapshot-topics.md).
          value = r.value === '' ? null : JSON.parse(r.value);
        } catch {
          value = r.value;
        }
        problems.push(...asyncapi.check({ topic, key: r.key, headers: r.headers, value }));
        const type = r.headers['ce_type'] ?? '?';
        checked.set(type, (checked.get(type) ?? 0) + 1);
      }
    }
    assert.deepEqual(problems, []);
    t.diagnostic(`events checked: ${[...checked].map(([type, n]) => `${type} x${n}`).join(', ')}`);
    // The flow above appends at least these event types; each was checked against its message.
    for (const type of ['hub.registry.party-registered.v1', 'hub.registry.credentials-registered.v1', 'hub.registry.routing-rule-changed.v1',
      'ocpi.locations.location-put.v1', 'ocpi.locations.location-patched.v1', 'ocpi.locations.evse-put.v1', 'ocpi.locations.evse-patched.v1',
      'ocpi.locations.connector-put.v1', 'ocpi.locations.connector-patched.v1', 'ocpi.tariffs.tariff-put.v1', 'ocpi.tariffs.tariff-deleted.v1',
      'ocpi.sessions.session-put.v1', 'ocpi.sessions.session-patched.v1', 'ocpi.cdrs.cdr-posted.v1', 'hub.registry.credentials-updated.v1',
      'hub.registry.credentials-deleted.v1', 'ocpi.commands.requested.v1', 'ocpi.commands.cpo-responded.v1', 'ocpi.commands.result-received.v1',
      'ocpi.tokens.token-put.v1', 'ocpi.tokens.token-patched.v1', 'ocpi.chargingprofiles.requested.v1', 'ocpi.chargingprofiles.cpo-responded.v1',
      'ocpi.chargingprofiles.result-received.v1', 'ocpi.chargingprofiles.active-profile-put.v1',
      'ocpi.locations-snapshot.location.v1', 'ocpi.tariffs-snapshot.tariff.v1', 'ocpi.tokens-snapshot.token.v1']) {
      assert.ok((checked.get(type) ?? 0) > 0, `no ${type} event seen`);
    }
    // And an event that breaks the document is refused.
    assert.notDeepEqual(asyncapi.check({ topic: topics.cdrs, key: 'BE/BEC/1', headers: { ce_type: 'ocpi.cdrs.cdr-posted.v1' }, value: {} }), []);
    assert.notDeepEqual(asyncapi.check({ topic: topics.cdrs, key: 'BE/BEC/1', headers: { ce_type: 'ocpi.locations.location-put.v1' }, value: {} }), []);
  });

  it('called every operation of the document and a representative set of refusals', (t) => {
    const operations = new Set([...covered].map((c) => c.split(' ').slice(0, 2).join(' ')));
    const statuses = new Set([...covered].map((c) => c.split(' ')[2]));
    const codes = new Set([...covered].map((c) => c.split(' ')[3]));
    t.diagnostic(`${operations.size} operations, ${covered.size} distinct answers (operation, HTTP status, OCPI status) checked`);
    // The OCPI 2.1.1 and 2.3.0 operations are called by test/contract-2.1.1.e2e.test.ts and test/contract-2.3.0.e2e.test.ts.
    const documented = Object.entries(doc('openapi.json')['paths'] as Record<string, Json>).filter(([path]) => !path.startsWith('/ocpi/2.1.1') && !path.startsWith('/ocpi/2.3.0')).flatMap(([path, ops]) => Object.keys(ops).filter((m) => !m.startsWith('x-')).map((m) => `${m.toUpperCase()} ${path}`));
    assert.deepEqual(documented.filter((op) => !operations.has(op)), [], 'every documented operation was called at least once');
    for (const s of ['200', '400', '401', '403', '404', '405']) assert.ok(statuses.has(s), `HTTP ${s} covered`);
    for (const c of ['1000', '2000', '2001', '2003']) assert.ok(codes.has(c), `OCPI ${c} covered`);
  });
});
