// Sessions and CDRs across versions (mod_sessions.md and mod_cdrs.md, 2.1.1; docs/reference/
// version-mapping.md): a 2.1.1 CPO names the driver only by auth_id, and the hub routes by it (the
// routed eMSPs' tokens by contract_id first, then the eMA-ID's country and provider); every record
// reaches its eMSP in the eMSP's version and validates there; a 2.1.1 eMSP gets the full Location the
// hub holds. Real ingress, projector and dispatcher processes, real Kafka and Postgres.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { call, createTestStack, startService, type PartnerSimulator, type ServiceProcess, type TestStack } from '@hub/testing';
import { assertValid, example211, freePort, hubctl, onboard, onboard211, onboard230, until, type OnboardedPlatform } from './helpers.ts';

type Json = Record<string, unknown>;

/** The 2.1.1 Location example (mod_locations.md 3.1). */
const location211 = (): Json => example211('mod_locations.md', '### 3.1 _Location_ Object');

async function received(partner: PartnerSimulator, kind: string, id: string): Promise<{ body: Json; headers: Record<string, unknown>; path: string }> {
  for (let i = 0; i < 150; i++) {
    const found = partner.received.find((r) => r.kind === kind && r.body['id'] === id);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no ${kind} ${id} received; got ${JSON.stringify(partner.received.map((r) => [r.kind, r.body['id']]))}`);
}

describe('OCPI 2.1.1 sessions and CDRs beside 2.2.1', () => {
  let stack: TestStack;
  let services: ServiceProcess[] = [];
  let hub: string;
  let env: Record<string, string>;
  let cpo211: OnboardedPlatform;
  let cpo221: OnboardedPlatform;
  let emsp211: OnboardedPlatform;
  let emsp221: OnboardedPlatform;
  let emsp230: OnboardedPlatform;
  const location = location211();
  const evse = (location['evses'] as Json[])[0] as Json;
  const oneEvse = { ...location, evses: [{ ...evse, connectors: [((evse['connectors'] as Json[])[0] as Json)] }] };
  const contractId221 = 'DE-NEW-C12345678-9';

  before(async () => {
    stack = await createTestStack('ocpi211-sessions');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', DELIVERY_RETRY_SCHEDULE_MS: '200,400' });
    services = await Promise.all([
      startService('ingress', env, /ingress listening/),
      startService('projector', env, /projector running/),
      startService('dispatcher', env, /dispatcher running/),
    ]);
    const emspModules = [{ identifier: 'credentials', role: 'SENDER' as const }, { identifier: 'sessions', role: 'RECEIVER' as const }, { identifier: 'cdrs', role: 'RECEIVER' as const }];
    const cpoModules = [{ identifier: 'credentials', role: 'SENDER' as const }, { identifier: 'tokens', role: 'RECEIVER' as const }, { identifier: 'commands', role: 'RECEIVER' as const }];
    const withTokens = [...emspModules, { identifier: 'tokens', role: 'SENDER' as const }];
    cpo211 = await onboard211(hub, env, 'Old CPO', { role: 'CPO', countryCode: 'BE', partyId: 'BEC' }, cpoModules);
    emsp211 = await onboard211(hub, env, 'Old eMSP', { role: 'EMSP', countryCode: 'NL', partyId: 'OLD' }, withTokens);
    cpo221 = await onboard(hub, env, 'New CPO', [{ role: 'CPO', countryCode: 'NL', partyId: 'NEW' }], cpoModules);
    emsp221 = await onboard(hub, env, 'New eMSP', [{ role: 'EMSP', countryCode: 'DE', partyId: 'NEW' }], withTokens);
    emsp230 = await onboard230(hub, env, 'eMSP 2.3.0', { role: 'EMSP', countryCode: 'PT', partyId: 'TRS' }, emspModules);
    for (const [e, c] of [['NL/OLD', 'BE/BEC'], ['NL/OLD', 'NL/NEW'], ['DE/NEW', 'BE/BEC'], ['DE/NEW', 'NL/NEW'], ['PT/TRS', 'BE/BEC']]) {
      const out = await hubctl(env, ['routing', 'enable', '--emsp', e ?? '', '--cpo', c ?? '']);
      assert.equal(out.code, 0, out.stderr);
    }
  });

  after(async () => {
    await Promise.allSettled([...services.map((s) => s.stop()), cpo211?.partner.close(), cpo221?.partner.close(), emsp211?.partner.close(), emsp221?.partner.close(), emsp230?.partner.close()]);
    await stack?.cleanup();
  });

  it('the 2.2.1 eMSP pushes a token whose contract_id a 2.1.1 CPO will name as auth_id; the 2.1.1 CPO pushes its Location', async () => {
    const token = { country_code: 'DE', party_id: 'NEW', uid: 'TOKEN221', type: 'RFID', contract_id: contractId221, issuer: 'New eMSP', valid: true, whitelist: 'ALLOWED', last_updated: '2026-01-01T00:00:00Z' };
    const pushed = await call(hub, 'PUT', '/ocpi/2.2.1/tokens/DE/NEW/TOKEN221', { token: emsp221.token, body: token });
    assert.equal(pushed.body.status_code, 1000, pushed.text);
    const loc = await call(hub, 'PUT', `/ocpi/2.1.1/locations/BE/BEC/${String(location['id'])}`, { token: cpo211.token, body: location });
    assert.equal(loc.body.status_code, 1000, loc.text);
  });

  const session211 = (id: string, authId: string): Json => ({
    id,
    start_datetime: '2026-11-26T10:00:00Z',
    kwh: 0,
    auth_id: authId,
    auth_method: 'WHITELIST',
    location: oneEvse,
    currency: 'EUR',
    status: 'ACTIVE',
    last_updated: '2026-11-26T10:00:00Z',
  });

  const cdr211 = (id: string, authId: string): Json => ({
    id,
    start_date_time: '2026-11-26T10:00:00Z',
    stop_date_time: '2026-11-26T11:30:00Z',
    auth_id: authId,
    auth_method: 'WHITELIST',
    location: oneEvse,
    currency: 'EUR',
    charging_periods: [{ start_date_time: '2026-11-26T10:00:00Z', dimensions: [{ type: 'ENERGY', volume: 15 }] }],
    total_cost: 4,
    total_energy: 15,
    total_time: 1.5,
    last_updated: '2026-11-26T11:30:00Z',
  });

  /** Waits until the 2.1.1 CPO can pull a token with this contract_id (the token read model holds it). */
  async function tokenProjected(contractId: string): Promise<void> {
    for (let i = 0; i < 100; i++) {
      const res = await call<Json[]>(hub, 'GET', '/ocpi/2.1.1/tokens?limit=1000', { token: cpo211.token });
      if ((res.body.data ?? []).some((t) => t['auth_id'] === contractId)) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`token with contract_id ${contractId} never projected`);
  }

  it('a 2.1.1 session whose auth_id is a routed eMSP token reaches the 2.2.1 eMSP with that token as cdr_token', async () => {
    // The token is projected asynchronously: the CPO pushes once the hub holds it (before, the session
    // would be parked under the hub until re-driven: the test below).
    await tokenProjected(contractId221);
    const res = await call(hub, 'PUT', '/ocpi/2.1.1/sessions/BE/BEC/S1', { token: cpo211.token, body: session211('S1', contractId221) });
    assert.equal(res.body.status_code, 1000, res.text);
    const got = await received(emsp221.partner, 'session', 'S1');
    await assertValid('ocpi/session.json', got.body);
    assert.deepEqual(got.body['cdr_token'], { country_code: 'DE', party_id: 'NEW', uid: 'TOKEN221', type: 'RFID', contract_id: contractId221 });
    assert.deepEqual([got.body['country_code'], got.body['party_id'], got.body['location_id'], got.body['evse_uid'], got.body['connector_id']], ['BE', 'BEC', location['id'], evse['uid'], '1']);
    assert.equal(got.body['start_date_time'], '2026-11-26T10:00:00Z');
    assert.ok(!('hub_version_fields' in got.body));
    assert.equal(got.path, '/ocpi/2.2.1/sessions/BE/BEC/S1');
  });

  it('a 2.1.1 session and CDR whose auth_id is an eMA-ID of a 2.3.0 eMSP reach it as valid 2.3.0 objects', async () => {
    const res = await call(hub, 'PUT', '/ocpi/2.1.1/sessions/BE/BEC/S23', { token: cpo211.token, body: session211('S23', 'PT-TRS-C00000001-1') });
    assert.equal(res.body.status_code, 1000, res.text);
    const got = await received(emsp230.partner, 'session', 'S23');
    await assertValid('ocpi-2.3.0/session.json', got.body);
    assert.equal(got.path, '/ocpi/2.3.0/sessions/BE/BEC/S23');
    assert.deepEqual([(got.body['cdr_token'] as Json)['country_code'], (got.body['cdr_token'] as Json)['party_id'], (got.body['cdr_token'] as Json)['contract_id']], ['PT', 'TRS', 'PT-TRS-C00000001-1']);
    const cdr = await call(hub, 'POST', '/ocpi/2.1.1/cdrs', { token: cpo211.token, body: cdr211('C23', 'PT-TRS-C00000001-1') });
    assert.equal(cdr.body.status_code, 1000, cdr.text);
    const gotCdr = await received(emsp230.partner, 'cdr', 'C23');
    await assertValid('ocpi-2.3.0/cdr.json', gotCdr.body);
    // 2.1.1 total_cost is a number excl. VAT: 2.3.0 gets it as before_taxes, no tax invented.
    assert.deepEqual(gotCdr.body['total_cost'], { before_taxes: 4 });
  });

  it('a 2.1.1 session whose auth_id is an eMA-ID reaches the 2.1.1 eMSP it names, in 2.1.1, with the raw token', async () => {
    const res = await call(hub, 'PUT', '/ocpi/2.1.1/sessions/BE/BEC/S2', { token: cpo211.token, body: session211('S2', 'NL-OLD-C00000001-1') });
    assert.equal(res.body.status_code, 1000, res.text);
    const got = await received(emsp211.partner, 'session', 'S2');
    await assertValid('ocpi-2.1.1/session.json', got.body);
    assert.equal(got.body['auth_id'], 'NL-OLD-C00000001-1');
    assert.deepEqual((got.body['location'] as Json)['id'], location['id']);
    assert.equal(got.headers['authorization'], `Token ${emsp211.partner.token}`);
    assert.equal(got.headers['ocpi-to-party-id'], undefined, '2.1.1 has no routing headers');
  });

  it('a 2.1.1 session PATCH without last_updated is delivered merged', async () => {
    const res = await call(hub, 'PATCH', '/ocpi/2.1.1/sessions/BE/BEC/S2', { token: cpo211.token, body: { kwh: 5.5 } });
    assert.equal(res.body.status_code, 1000, res.text);
    for (let i = 0; i < 100; i++) {
      if (emsp211.partner.received.some((r) => r.kind === 'session' && r.body['id'] === 'S2' && r.body['kwh'] === 5.5)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const patched = emsp211.partner.received.filter((r) => r.kind === 'session' && r.body['id'] === 'S2').at(-1);
    assert.equal(patched?.body['kwh'], 5.5);
    await assertValid('ocpi-2.1.1/session.json', patched?.body);
  });

  it('a 2.1.1 CDR reaches the 2.2.1 eMSP as a valid 2.2.1 CDR; the CPO reads it back in 2.1.1', async () => {
    const cdr = cdr211('CDR1', contractId221);
    await assertValid('ocpi-2.1.1/cdr.json', cdr);
    const res = await call(hub, 'POST', '/ocpi/2.1.1/cdrs', { token: cpo211.token, body: cdr });
    assert.equal(res.body.status_code, 1000, res.text);
    assert.match(String(res.headers['location']), /\/ocpi\/2\.1\.1\/cdrs\/BE\/BEC\/CDR1$/);
    const got = await received(emsp221.partner, 'cdr', 'CDR1');
    await assertValid('ocpi/cdr.json', got.body);
    assert.deepEqual(got.body['total_cost'], { excl_vat: 4 });
    assert.equal((got.body['cdr_token'] as Json)['uid'], 'TOKEN221');
    const back = await call<Json>(hub, 'GET', '/ocpi/2.1.1/cdrs/BE/BEC/CDR1', { token: cpo211.token });
    assert.equal(back.body.status_code, 1000, back.text);
    await assertValid('ocpi-2.1.1/cdr.json', back.body.data);
    assert.equal(back.body.data?.['total_cost'], 4);
  });

  it('a 2.2.1 session and CDR for the 2.1.1 eMSP arrive in 2.1.1 with the Location the hub holds', async () => {
    const loc = JSON.parse(readFileSync(new URL('../../shared/ocpi-2.2.1/examples/location_example_parking_garage_opening_hours.json', import.meta.url), 'utf8')) as Json;
    const location221: Json = { ...loc, country_code: 'NL', party_id: 'NEW' };
    const pushed = await call(hub, 'PUT', `/ocpi/2.2.1/locations/NL/NEW/${String(location221['id'])}`, { token: cpo221.token, body: location221 });
    assert.equal(pushed.body.status_code, 1000, pushed.text);
    const evse221 = (location221['evses'] as Json[])[0] as Json;
    const connector221 = (evse221['connectors'] as Json[])[0] as Json;
    const cdrToken = { country_code: 'NL', party_id: 'OLD', uid: 'OLDTOKEN', type: 'RFID', contract_id: 'NL-OLD-C00000002-2' };
    const session = {
      country_code: 'NL', party_id: 'NEW', id: 'S3', start_date_time: '2026-11-26T10:00:00Z', kwh: 1, cdr_token: cdrToken, auth_method: 'WHITELIST',
      location_id: location221['id'], evse_uid: evse221['uid'], connector_id: connector221['id'], currency: 'EUR', status: 'ACTIVE', last_updated: '2026-11-26T10:00:00Z',
    };
    // The Location is projected asynchronously: a delivery that finds it missing is retried, not parked.
    const res = await call(hub, 'PUT', '/ocpi/2.2.1/sessions/NL/NEW/S3', { token: cpo221.token, body: session });
    assert.equal(res.body.status_code, 1000, res.text);
    const got = await received(emsp211.partner, 'session', 'S3');
    await assertValid('ocpi-2.1.1/session.json', got.body);
    assert.equal(got.body['auth_id'], 'NL-OLD-C00000002-2');
    const sent = got.body['location'] as Json;
    assert.equal(sent['id'], location221['id']);
    assert.deepEqual((sent['evses'] as Json[]).map((e) => e['uid']), [evse221['uid']]);
  });

  async function listedUnroutable(what: RegExp): Promise<string> {
    let listed = '';
    for (let i = 0; i < 100 && !what.test(listed); i++) {
      listed = (await hubctl(env, ['deliveries', 'list', '--state', 'unroutable'])).stdout;
      if (!what.test(listed)) await new Promise((r) => setTimeout(r, 200));
    }
    return listed;
  }

  it('a session and a CDR whose auth_id names no eMSP are accepted, parked as unroutable with the reason, and reach the eMSP when re-driven after it pushed the token', async () => {
    const authId = '04A2B3C4D5';
    const session = await call(hub, 'PUT', '/ocpi/2.1.1/sessions/BE/BEC/S9', { token: cpo211.token, body: session211('S9', authId) });
    assert.equal(session.body.status_code, 1000, session.text);
    const cdr = await call(hub, 'POST', '/ocpi/2.1.1/cdrs', { token: cpo211.token, body: cdr211('CDR9', authId) });
    assert.equal(cdr.body.status_code, 1000, cdr.text);
    // Still the CPO's to read back as it sent it.
    const back = await call<Json>(hub, 'GET', '/ocpi/2.1.1/cdrs/BE/BEC/CDR9', { token: cpo211.token });
    assert.equal(back.body.data?.['auth_id'], authId);
    const listed = await listedUnroutable(/S9[\s\S]*CDR9|CDR9[\s\S]*S9/);
    assert.match(listed, /S9/);
    assert.match(listed, /CDR9/);
    assert.match(listed, /auth_id names no eMSP: no eMSP routed to BE\/BEC pushed a token with it as contract_id/);
    // A PATCH of the parked session is accepted too (the hub holds the session) and merged into it.
    const patch = await call(hub, 'PATCH', '/ocpi/2.1.1/sessions/BE/BEC/S9', { token: cpo211.token, body: { kwh: 7.5 } });
    assert.equal(patch.body.status_code, 1000, patch.text);
    // The eMSP pushes the token; the operator re-drives what was parked.
    const token = { country_code: 'DE', party_id: 'NEW', uid: 'RFID9', type: 'RFID', contract_id: authId, issuer: 'New eMSP', valid: true, whitelist: 'ALLOWED', last_updated: '2026-01-01T00:00:00Z' };
    assert.equal((await call(hub, 'PUT', '/ocpi/2.2.1/tokens/DE/NEW/RFID9', { token: emsp221.token, body: token })).body.status_code, 1000);
    await tokenProjected(authId);
    const redriven = await hubctl(env, ['deliveries', 'redrive', '--cpo', 'BE/BEC']);
    assert.equal(redriven.code, 0, redriven.stderr);
    const gotSession = await received(emsp221.partner, 'session', 'S9');
    await assertValid('ocpi/session.json', gotSession.body);
    assert.deepEqual(gotSession.body['cdr_token'], { country_code: 'DE', party_id: 'NEW', uid: 'RFID9', type: 'RFID', contract_id: authId });
    assert.equal(gotSession.body['kwh'], 7.5);
    const gotCdr = await received(emsp221.partner, 'cdr', 'CDR9');
    await assertValid('ocpi/cdr.json', gotCdr.body);
    assert.deepEqual(gotCdr.body['cdr_token'], { country_code: 'DE', party_id: 'NEW', uid: 'RFID9', type: 'RFID', contract_id: authId });
    assert.deepEqual(gotCdr.body['total_cost'], { excl_vat: 4 });
    assert.equal(gotCdr.body['total_energy'], 15);
    assert.doesNotMatch((await hubctl(env, ['deliveries', 'list', '--state', 'unroutable'])).stdout, /S9|CDR9/);
  });

  it('an eMA-ID of an eMSP the hub does not route is parked as unroutable under that eMSP', async () => {
    const parked = await call(hub, 'PUT', '/ocpi/2.1.1/sessions/BE/BEC/S8', { token: cpo211.token, body: session211('S8', 'FR-XYZ-C00000001-1') });
    assert.equal(parked.body.status_code, 1000, parked.text);
    const listed = await listedUnroutable(/S8/);
    assert.match(listed, /S8/);
    assert.match(listed, /FR\/XYZ/);
  });

  const token211 = { uid: 'OLD1', type: 'RFID', auth_id: 'NL-OLD-C00000003-3', visual_number: 'OLD 1', issuer: 'Old eMSP', valid: true, whitelist: 'ALLOWED', last_updated: '2026-11-26T09:00:00Z' };

  it('a 2.1.1 eMSP pushes a 2.1.1 Token: the 2.2.1 CPO receives it in 2.2.1, the 2.1.1 CPO pulls both eMSPs\' tokens in 2.1.1', async () => {
    await assertValid('ocpi-2.1.1/token.json', token211);
    const pushed = await call(hub, 'PUT', '/ocpi/2.1.1/tokens/NL/OLD/OLD1', { token: emsp211.token, body: token211 });
    assert.equal(pushed.body.status_code, 1000, pushed.text);
    const got = await received(cpo221.partner, 'token', 'OLD1').catch(async () => {
      const byUid = cpo221.partner.received.find((r) => r.kind === 'token' && r.body['uid'] === 'OLD1');
      if (!byUid) throw new Error(`no token OLD1 at the 2.2.1 CPO: ${JSON.stringify(cpo221.partner.received.map((r) => r.body))}`);
      return byUid;
    });
    await assertValid('ocpi/token.json', got.body);
    assert.deepEqual([got.body['country_code'], got.body['party_id'], got.body['contract_id']], ['NL', 'OLD', 'NL-OLD-C00000003-3']);
    let pulled: Json[] = [];
    // Both eMSPs' tokens: TOKEN221 and RFID9 of the 2.2.1 eMSP (tests above), OLD1 of the 2.1.1 one.
    for (let i = 0; i < 50 && pulled.length < 3; i++) {
      const res = await call<Json[]>(hub, 'GET', '/ocpi/2.1.1/tokens', { token: cpo211.token });
      assert.equal(res.body.status_code, 1000, res.text);
      pulled = res.body.data ?? [];
      if (pulled.length < 3) await new Promise((r) => setTimeout(r, 200));
    }
    assert.deepEqual(pulled.map((t) => t['uid']).sort(), ['OLD1', 'RFID9', 'TOKEN221']);
    for (const t of pulled) await assertValid('ocpi-2.1.1/token.json', t);
    assert.equal(pulled.find((t) => t['uid'] === 'TOKEN221')?.['auth_id'], contractId221);
  });

  it('a 2.1.1 eMSP pushes, patches and reads back a Token of type OTHER: 2.1.1 names a token by its uid alone (mod_tokens.md 2.1)', async () => {
    const other = { ...token211, uid: 'OLD2', type: 'OTHER', auth_id: 'NL-OLD-C00000004-4' };
    const pushed = await call(hub, 'PUT', '/ocpi/2.1.1/tokens/NL/OLD/OLD2', { token: emsp211.token, body: other });
    assert.equal(pushed.body.status_code, 1000, pushed.text);
    const patched = await call(hub, 'PATCH', '/ocpi/2.1.1/tokens/NL/OLD/OLD2', { token: emsp211.token, body: { valid: false, last_updated: '2026-11-26T09:05:00Z' } });
    assert.equal(patched.body.status_code, 1000, patched.text);
    const read = await until('the patched OTHER token', async () => {
      const res = await call<Json>(hub, 'GET', '/ocpi/2.1.1/tokens/NL/OLD/OLD2', { token: emsp211.token });
      return res.body.data?.['valid'] === false ? res : undefined;
    });
    assert.equal(read.body.status_code, 1000, read.text);
    await assertValid('ocpi-2.1.1/token.json', read.body.data);
    assert.equal(read.body.data?.['type'], 'OTHER');
    // The RFID token of the test above is still found by its uid alone.
    const rfid = await call<Json>(hub, 'GET', '/ocpi/2.1.1/tokens/NL/OLD/OLD1', { token: emsp211.token });
    assert.equal(rfid.body.data?.['type'], 'RFID', rfid.text);
  });

  it('a 2.1.1 CPO asks for real-time authorization of a 2.2.1 eMSP token: the answer comes in 2.1.1', async () => {
    emsp221.partner.authorizeAnswer = 'ALLOWED';
    const res = await call<Json>(hub, 'POST', '/ocpi/2.1.1/tokens/TOKEN221/authorize', { token: cpo211.token, body: { location_id: String(location['id']), evse_uids: [String(evse['uid'])], connector_ids: ['1'] } });
    assert.equal(res.body.status_code, 1000, res.text);
    await assertValid('ocpi-2.1.1/authorization_info.json', res.body.data);
    assert.equal(res.body.data?.['allowed'], 'ALLOWED');
    assert.ok(!('token' in (res.body.data ?? {})), '2.1.1 AuthorizationInfo has no token');
    const asked = emsp221.partner.requests.filter((r) => r.path === '/ocpi/2.2.1/tokens/TOKEN221/authorize').at(-1);
    assert.deepEqual(asked?.body, { location_id: String(location['id']), evse_uids: [String(evse['uid'])] }, '2.2.1 LocationReferences have no connector_ids');
  });

  it("a 2.1.1 CPO authorizes a 2.2.1 eMSP's APP_USER token, which it got as OTHER (2.1.1 has no APP_USER): the eMSP is asked for its APP_USER token", async () => {
    const appToken = { country_code: 'DE', party_id: 'NEW', uid: 'APP1', type: 'APP_USER', contract_id: 'DE-NEW-C00000042-1', issuer: 'New eMSP', valid: true, whitelist: 'ALLOWED', last_updated: '2026-01-01T00:00:00Z' };
    const pushed = await call(hub, 'PUT', '/ocpi/2.2.1/tokens/DE/NEW/APP1?type=APP_USER', { token: emsp221.token, body: appToken });
    assert.equal(pushed.body.status_code, 1000, pushed.text);
    await tokenProjected('DE-NEW-C00000042-1');
    const pulled = await call<Json[]>(hub, 'GET', '/ocpi/2.1.1/tokens?limit=1000', { token: cpo211.token });
    assert.equal(pulled.body.data?.find((t) => t['uid'] === 'APP1')?.['type'], 'OTHER');
    emsp221.partner.authorizeAnswer = 'ALLOWED';
    const res = await call<Json>(hub, 'POST', '/ocpi/2.1.1/tokens/APP1/authorize?type=OTHER', { token: cpo211.token, body: { location_id: String(location['id']) } });
    assert.equal(res.body.status_code, 1000, res.text);
    assert.equal(res.body.data?.['allowed'], 'ALLOWED');
    assert.ok(emsp221.partner.requests.some((r) => r.path === '/ocpi/2.2.1/tokens/APP1/authorize'), 'the 2.2.1 eMSP was asked');
  });

  it('a 2.1.1 CPO asks for real-time authorization of a token no eMSP pushed: an eMA-ID goes to the eMSP it names, anything else is unknown (2000)', async () => {
    emsp211.partner.authorizeAnswer = 'ALLOWED';
    const res = await call<Json>(hub, 'POST', '/ocpi/2.1.1/tokens/NL-OLD-C00000077-7/authorize', { token: cpo211.token, body: {} });
    assert.equal(res.body.status_code, 1000, res.text);
    await assertValid('ocpi-2.1.1/authorization_info.json', res.body.data);
    assert.equal(res.body.data?.['allowed'], 'ALLOWED');
    assert.ok(emsp211.partner.requests.some((r) => r.path === '/ocpi/2.1.1/tokens/NL-OLD-C00000077-7/authorize'), 'the 2.1.1 eMSP was asked');
    const unknown = await call<Json>(hub, 'POST', '/ocpi/2.1.1/tokens/04FFFFFFFF/authorize', { token: cpo211.token, body: {} });
    assert.equal(unknown.body.status_code, 2000, unknown.text);
  });

  it('a 2.2.1 CPO asks for real-time authorization of a 2.1.1 eMSP token: the answer is a 2.2.1 AuthorizationInfo with the token', async () => {
    emsp211.partner.authorizeAnswer = 'BLOCKED';
    const res = await call<Json>(hub, 'POST', '/ocpi/2.2.1/tokens/OLD1/authorize', { token: cpo221.token, body: {} });
    assert.equal(res.body.status_code, 1000, res.text);
    await assertValid('ocpi/authorization_info.json', res.body.data);
    assert.equal(res.body.data?.['allowed'], 'BLOCKED');
    assert.equal((res.body.data?.['token'] as Json | undefined)?.['contract_id'], 'NL-OLD-C00000003-3');
    const asked = emsp211.partner.requests.filter((r) => r.path === '/ocpi/2.1.1/tokens/OLD1/authorize').at(-1);
    assert.equal(asked?.headers['authorization'], `Token ${emsp211.partner.token}`);
  });

  it('a 2.1.1 CPO whose eMSP answers garbage gets 3000 (2.1.1 has no 4xxx) and no 2.2.1-shaped data', async () => {
    emsp221.partner.authorizeAnswer = 'garbage';
    const res = await call<Json>(hub, 'POST', '/ocpi/2.1.1/tokens/TOKEN221/authorize', { token: cpo211.token });
    assert.equal(res.body.status_code, 3000, res.text);
    assert.equal(res.body.data, undefined);
    emsp221.partner.authorizeAnswer = 'ALLOWED';
  });

  it('2.1.1 callers get codes of their version: an unknown token is 2000 (2.1.1 has no 2004), and a 2.2.1 eMSP asking a 2.1.1 CPO is refused', async () => {
    const unknown = await call(hub, 'POST', '/ocpi/2.1.1/tokens/NOPE/authorize', { token: cpo211.token });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.status_code, 2000);
    assert.match(String(unknown.body.status_message), /has pushed token NOPE/);
    const toOldCpo = await call(hub, 'PUT', '/ocpi/2.2.1/tokens/DE/NEW/TOKEN221/authorize', {
      token: emsp221.token,
      headers: { 'OCPI-to-country-code': 'BE', 'OCPI-to-party-id': 'BEC' },
      body: { location_id: String(location['id']) },
    });
    assert.equal(toOldCpo.body.status_code, 4001, toOldCpo.text);
    assert.match(String(toOldCpo.body.status_message), /speaks OCPI 2\.1\.1/);
  });

  it('a 2.2.1 eMSP starts a session at a 2.1.1 CPO: the CPO gets a 2.1.1 StartSession, the eMSP the answer and the result in 2.2.1', async () => {
    cpo211.partner.commandAnswer = 'ACCEPTED';
    cpo211.partner.commandResult = 'ACCEPTED';
    const responseUrl = `${emsp221.partner.baseUrl}/ocpi/2.2.1/command-results/start-1`;
    const start = {
      response_url: responseUrl,
      token: { country_code: 'DE', party_id: 'NEW', uid: 'TOKEN221', type: 'RFID', contract_id: contractId221, issuer: 'New eMSP', valid: true, whitelist: 'ALLOWED', last_updated: '2026-01-01T00:00:00Z' },
      location_id: String(location['id']),
      evse_uid: String(evse['uid']),
    };
    const res = await call<Json>(hub, 'POST', '/ocpi/2.2.1/commands/START_SESSION', { token: emsp221.token, body: start });
    assert.equal(res.body.status_code, 1000, res.text);
    await assertValid('ocpi/command_response.json', res.body.data);
    assert.equal(res.body.data?.['result'], 'ACCEPTED');
    const atCpo = cpo211.partner.commands.at(-1);
    assert.equal(atCpo?.command, 'START_SESSION');
    await assertValid('ocpi-2.1.1/start_session.json', atCpo?.body);
    assert.equal((atCpo?.body['token'] as Json)['auth_id'], contractId221);
    assert.match(String(atCpo?.body['response_url']), /\/ocpi\/2\.1\.1\/commands\/callback\//);
    const result = await (async () => {
      for (let i = 0; i < 100; i++) {
        const r = emsp221.partner.received.find((x) => x.kind === 'command_result' && x.path.endsWith('/start-1'));
        if (r) return r;
        await new Promise((x) => setTimeout(x, 100));
      }
      throw new Error('no command result at the eMSP');
    })();
    await assertValid('ocpi/command_result.json', result.body);
    assert.equal(result.body['result'], 'ACCEPTED');
  });

  it('a 2.1.1 eMSP starts a session at a 2.2.1 CPO: the answer and the result reach it in 2.1.1', async () => {
    cpo221.partner.commandAnswer = 'ACCEPTED';
    cpo221.partner.commandResult = 'REJECTED';
    const loc = (await call<Json[]>(hub, 'GET', '/ocpi/2.2.1/locations', { token: emsp221.token })).body.data?.find((l) => l['party_id'] === 'NEW') as Json;
    const evse221 = (loc['evses'] as Json[])[0] as Json;
    const start211 = {
      response_url: `${emsp211.partner.baseUrl}/ocpi/2.1.1/command-results/start-2`,
      token: { uid: 'OLD1', type: 'RFID', auth_id: 'NL-OLD-C00000003-3', issuer: 'Old eMSP', valid: true, whitelist: 'ALLOWED', last_updated: '2026-11-26T09:00:00Z' },
      location_id: String(loc['id']),
      evse_uid: String(evse221['uid']),
    };
    await assertValid('ocpi-2.1.1/start_session.json', start211);
    const res = await call<Json>(hub, 'POST', '/ocpi/2.1.1/commands/START_SESSION', { token: emsp211.token, body: start211 });
    assert.equal(res.body.status_code, 1000, res.text);
    await assertValid('ocpi-2.1.1/command_response.json', res.body.data);
    const atCpo = cpo221.partner.commands.at(-1);
    await assertValid('ocpi/start_session.json', atCpo?.body);
    assert.deepEqual([(atCpo?.body['token'] as Json)['country_code'], (atCpo?.body['token'] as Json)['contract_id']], ['NL', 'NL-OLD-C00000003-3']);
    let result: Json | undefined;
    for (let i = 0; i < 100 && !result; i++) {
      result = emsp211.partner.received.find((x) => x.kind === 'command_result' && x.path.endsWith('/start-2'))?.body;
      if (!result) await new Promise((x) => setTimeout(x, 100));
    }
    await assertValid('ocpi-2.1.1/command_response.json', result);
    assert.equal(result?.['result'], 'REJECTED');
  });

  it('STOP_SESSION, RESERVE_NOW and UNLOCK_CONNECTOR from a 2.2.1 eMSP reach the 2.1.1 CPO in 2.1.1, and their results come back', async () => {
    cpo211.partner.commandAnswer = 'ACCEPTED';
    cpo211.partner.commandResult = 'ACCEPTED';
    const url = (id: string) => `${emsp221.partner.baseUrl}/ocpi/2.2.1/command-results/${id}`;
    const token = { country_code: 'DE', party_id: 'NEW', uid: 'TOKEN221', type: 'RFID', contract_id: contractId221, issuer: 'New eMSP', valid: true, whitelist: 'ALLOWED', last_updated: '2026-01-01T00:00:00Z' };
    const commands: Array<[string, Json, string]> = [
      ['STOP_SESSION', { response_url: url('stop-1'), session_id: 'S1' }, 'ocpi-2.1.1/stop_session.json'],
      ['RESERVE_NOW', { response_url: url('reserve-1'), token, expiry_date: '2026-11-26T20:00:00Z', reservation_id: '42', location_id: String(location['id']), evse_uid: String(evse['uid']) }, 'ocpi-2.1.1/reserve_now.json'],
      ['UNLOCK_CONNECTOR', { response_url: url('unlock-1'), location_id: String(location['id']), evse_uid: String(evse['uid']), connector_id: '1' }, 'ocpi-2.1.1/unlock_connector.json'],
    ];
    for (const [command, body, schema] of commands) {
      const res = await call<Json>(hub, 'POST', `/ocpi/2.2.1/commands/${command}`, { token: emsp221.token, body });
      assert.equal(res.body.data?.['result'], 'ACCEPTED', `${command}: ${res.text}`);
      const atCpo = cpo211.partner.commands.at(-1);
      assert.equal(atCpo?.command, command);
      await assertValid(schema, atCpo?.body);
      if (command === 'RESERVE_NOW') assert.equal(atCpo?.body['reservation_id'], 42, 'a 2.1.1 reservation_id is an int');
    }
    for (const id of ['stop-1', 'reserve-1', 'unlock-1']) {
      let result: Json | undefined;
      for (let i = 0; i < 100 && !result; i++) {
        result = emsp221.partner.received.find((x) => x.kind === 'command_result' && x.path.endsWith(`/${id}`))?.body;
        if (!result) await new Promise((x) => setTimeout(x, 100));
      }
      await assertValid('ocpi/command_result.json', result);
      assert.equal(result?.['result'], 'ACCEPTED', id);
    }
  });

  it('CANCEL_RESERVATION, which 2.1.1 lacks: NOT_SUPPORTED to a 2.2.1 eMSP asking a 2.1.1 CPO; 2001 from a 2.1.1 eMSP', async () => {
    const cancel = await call<Json>(hub, 'POST', '/ocpi/2.2.1/commands/CANCEL_RESERVATION', {
      token: emsp221.token,
      headers: { 'OCPI-to-country-code': 'BE', 'OCPI-to-party-id': 'BEC' },
      body: { response_url: `${emsp221.partner.baseUrl}/ocpi/2.2.1/command-results/cancel-1`, reservation_id: 'R1' },
    });
    assert.equal(cancel.body.status_code, 1000, cancel.text);
    assert.equal(cancel.body.data?.['result'], 'NOT_SUPPORTED');
    const from211 = await call(hub, 'POST', '/ocpi/2.1.1/commands/CANCEL_RESERVATION', { token: emsp211.token, body: { response_url: `${emsp211.partner.baseUrl}/x`, reservation_id: 'R1' } });
    assert.equal(from211.body.status_code, 2001);
    assert.match(String(from211.body.status_message), /unsupported command CANCEL_RESERVATION; use START_SESSION, STOP_SESSION, RESERVE_NOW, UNLOCK_CONNECTOR/);
  });

  it('nothing the hub sent a 2.1.1 partner breaks the 2.1.1 schemas (schemas/ocpi-2.1.1)', () => {
    assert.ok(emsp211.partner.received.length + emsp211.partner.commands.length > 0 || emsp211.partner.requests.length > 0);
    assert.deepEqual(emsp211.partner.violations211, []);
    assert.ok(cpo211.partner.received.length + cpo211.partner.commands.length > 0 || cpo211.partner.requests.length > 0);
    assert.deepEqual(cpo211.partner.violations211, []);
  });
});
