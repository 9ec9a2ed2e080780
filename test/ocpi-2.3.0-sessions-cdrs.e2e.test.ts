// Sessions and CDRs across OCPI 2.3.0, 2.2.1 and 2.1.1 (ocpi-2.3.0/mod_sessions.asciidoc,
// ocpi-2.3.0/mod_cdrs.asciidoc; docs/reference/version-mapping.md, OCPI 2.3.0): a 2.3.0 CPO pushes
// sessions (PUT, PATCH) and posts CDRs; a 2.2.1 and a 2.1.1 eMSP receive them valid in their version
// with the prices meaning what they meant (before_taxes + taxes <-> excl_vat/incl_vat, ADR 0012); a
// 2.2.1 CPO's session and CDR reach a 2.3.0 eMSP as valid 2.3.0 objects. Real ingress, projector and
// dispatcher processes, real Kafka and Postgres.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, createTestStack, startService, type PartnerSimulator, type ServiceProcess, type TestStack } from '@hub/testing';
import { assertValid, example230, freePort, ocpiExample, onboard, onboard211, onboard230, routeEvery, until, type OnboardedPlatform } from './helpers.ts';

type Json = Record<string, unknown>;

/** The last object of `kind` with this id the partner received that satisfies `ready`. */
const received = (partner: PartnerSimulator, kind: 'session' | 'cdr', id: string, ready: (body: Json) => boolean = () => true) =>
  until(`${kind} ${id} received`, () => partner.received.filter((r) => r.kind === kind && r.body['id'] === id && ready(r.body)).at(-1), 30_000);

describe('OCPI 2.3.0 sessions and CDRs beside 2.2.1 and 2.1.1', () => {
  let stack: TestStack;
  let services: ServiceProcess[] = [];
  let hub: string;
  let env: Record<string, string>;
  let cpo230: OnboardedPlatform;
  let cpo221: OnboardedPlatform;
  let emsp230: OnboardedPlatform;
  let emsp221: OnboardedPlatform;
  let emsp211: OnboardedPlatform;
  const location230 = example230('location_example.json');
  const tokenOf = (country: string, party: string) => ({ country_code: country, party_id: party, uid: `${party}TOKEN`, type: 'RFID', contract_id: `${country}-${party}-C00000001-1` });

  before(async () => {
    stack = await createTestStack('ocpi230-sessions');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', DELIVERY_RETRY_SCHEDULE_MS: '200,400,800,1600' });
    services = await Promise.all([
      startService('ingress', env, /ingress listening/),
      startService('projector', env, /projector running/),
      startService('dispatcher', env, /dispatcher running/),
    ]);
    const emspModules = [{ identifier: 'credentials', role: 'SENDER' as const }, { identifier: 'sessions', role: 'RECEIVER' as const }, { identifier: 'cdrs', role: 'RECEIVER' as const }];
    cpo230 = await onboard230(hub, env, 'CPO 2.3.0', { role: 'CPO', countryCode: 'BE', partyId: 'BEC' });
    cpo221 = await onboard(hub, env, 'CPO 2.2.1', [{ role: 'CPO', countryCode: 'NL', partyId: 'NEW' }]);
    emsp230 = await onboard230(hub, env, 'eMSP 2.3.0', { role: 'EMSP', countryCode: 'NL', partyId: 'TST' }, emspModules);
    emsp221 = await onboard(hub, env, 'eMSP 2.2.1', [{ role: 'EMSP', countryCode: 'DE', partyId: 'NEW' }], emspModules);
    emsp211 = await onboard211(hub, env, 'eMSP 2.1.1', { role: 'EMSP', countryCode: 'FR', partyId: 'OLD' }, emspModules);
    await routeEvery(env, ['NL/TST', 'DE/NEW', 'FR/OLD'], ['BE/BEC', 'NL/NEW']);
  });

  after(async () => {
    await Promise.allSettled([...services.map((s) => s.stop()), ...[cpo230, cpo221, emsp230, emsp221, emsp211].map((p) => p?.partner.close())]);
    await stack?.cleanup();
  });

  const v230 = (path: string) => `/ocpi/2.3.0/${path}`;
  const session230 = (id: string, cdrToken: Json): Json => ({ ...example230('session_example_1_simple_start.json'), country_code: 'BE', party_id: 'BEC', id, cdr_token: cdrToken });
  // cdr_example.json is defective: its Tariff lacks tax_included, required in 2.3.0 (mod_tariffs.asciidoc
  // Tariff object); its price carries a vat, so NO is what it means.
  const cdr230 = (id: string, cdrToken: Json): Json => {
    const example = example230('cdr_example.json');
    return { ...example, id, cdr_token: cdrToken, tariffs: (example['tariffs'] as Json[]).map((t) => ({ ...t, tax_included: 'NO' })) };
  };

  it('the 2.3.0 CPO pushes its Location (a 2.1.1 eMSP gets it inside each session and CDR)', async () => {
    const res = await call(hub, 'PUT', v230('locations/BE/BEC/LOC1'), { token: cpo230.token, body: location230 });
    assert.equal(res.body.status_code, 1000, res.text);
  });

  it('a 2.3.0 session (PUT, then the 2.3.0 total_cost PATCH example) reaches the 2.2.1 eMSP as valid 2.2.1 with before_taxes+taxes as excl_vat/incl_vat', async () => {
    const session = session230('S1', tokenOf('DE', 'NEW'));
    await assertValid('ocpi-2.3.0/session.json', session);
    const put = await call(hub, 'PUT', v230('sessions/BE/BEC/S1'), { token: cpo230.token, body: session });
    assert.equal(put.body.status_code, 1000, put.text);
    const got = await received(emsp221.partner, 'session', 'S1');
    await assertValid('ocpi/session.json', got.body);
    assert.deepEqual(got.body['total_cost'], { excl_vat: 2.5 }, 'no taxes list: nothing known about VAT, none invented');
    assert.equal(got.path, '/ocpi/2.2.1/sessions/BE/BEC/S1');
    assert.ok(!('hub_version_fields' in got.body));
    // The example's last_updated is older than the session example's: a later one, so it is newer (ADR 0001).
    const patch = { ...example230('session_patch_example_total_cost.json'), last_updated: '2020-03-09T11:00:00Z' };
    const patched = await call(hub, 'PATCH', v230('sessions/BE/BEC/S1'), { token: cpo230.token, body: patch });
    assert.equal(patched.body.status_code, 1000, patched.text);
    const merged = await received(emsp221.partner, 'session', 'S1', (b) => (b['total_cost'] as Json)['excl_vat'] === 0.6);
    await assertValid('ocpi/session.json', merged.body);
    assert.deepEqual(merged.body['total_cost'], { excl_vat: 0.6, incl_vat: 0.66 });
  });

  it('a 2.3.0 session reaches the 2.1.1 eMSP as a valid 2.1.1 Session with its Location and total_cost excl. VAT', async () => {
    const session = { ...session230('S2', tokenOf('FR', 'OLD')), total_cost: { before_taxes: 3, taxes: [{ name: 'VAT', amount: 0.6 }] } };
    const put = await call(hub, 'PUT', v230('sessions/BE/BEC/S2'), { token: cpo230.token, body: session });
    assert.equal(put.body.status_code, 1000, put.text);
    const got = await received(emsp211.partner, 'session', 'S2');
    await assertValid('ocpi-2.1.1/session.json', got.body);
    assert.equal(got.body['total_cost'], 3);
    assert.equal(got.body['auth_id'], 'FR-OLD-C00000001-1');
    assert.equal((got.body['location'] as Json)['id'], 'LOC1');
    // The 2.3.0 PATCH of the session's total_cost reaches the 2.1.1 eMSP as 2.1.1's excl. VAT number.
    const patch = { ...example230('session_patch_example_total_cost.json'), last_updated: '2020-03-09T11:00:00Z' };
    const patched = await call(hub, 'PATCH', v230('sessions/BE/BEC/S2'), { token: cpo230.token, body: patch });
    assert.equal(patched.body.status_code, 1000, patched.text);
    // Sessions reach receivers whole (interface document, Receiver endpoints).
    const merged = await received(emsp211.partner, 'session', 'S2', (b) => b['total_cost'] === 0.6);
    await assertValid('ocpi-2.1.1/session.json', merged.body);
  });

  it('a 2.3.0 CDR (the 2.3.0 example) reaches the 2.2.1 and the 2.1.1 eMSP valid in their versions; the CPO reads it back in 2.3.0 with its taxes', async () => {
    const cdr = cdr230('CDR1', tokenOf('DE', 'NEW'));
    const posted = await call(hub, 'POST', v230('cdrs'), { token: cpo230.token, body: cdr });
    assert.equal(posted.body.status_code, 1000, posted.text);
    assert.match(String(posted.headers['location']), /\/ocpi\/2\.3\.0\/cdrs\/BE\/BEC\/CDR1$/);
    const got = await received(emsp221.partner, 'cdr', 'CDR1');
    await assertValid('ocpi/cdr.json', got.body);
    assert.deepEqual(got.body['total_cost'], { excl_vat: 4, incl_vat: 4.4 });
    assert.deepEqual(got.body['total_time_cost'], { excl_vat: 4, incl_vat: 4.4 });
    assert.ok(!('hub_version_fields' in got.body));
    const old = await call(hub, 'POST', v230('cdrs'), { token: cpo230.token, body: cdr230('CDR2', tokenOf('FR', 'OLD')) });
    assert.equal(old.body.status_code, 1000, old.text);
    const got211 = await received(emsp211.partner, 'cdr', 'CDR2');
    await assertValid('ocpi-2.1.1/cdr.json', got211.body);
    assert.equal(got211.body['total_cost'], 4, '2.1.1 total_cost is excl. VAT');
    const back = await call<Json>(hub, 'GET', v230('cdrs/BE/BEC/CDR1'), { token: cpo230.token });
    assert.equal(back.body.status_code, 1000, back.text);
    await assertValid('ocpi-2.3.0/cdr.json', back.body.data);
    assert.deepEqual(back.body.data?.['total_cost'], cdr['total_cost']);
  });

  it('a CDR tariff with tax_included YES and no vat (tariff_20) does not reach a 2.2.1 eMSP with tax-inclusive prices; the CPO reads it back whole', async () => {
    const inclusive: Json = { ...example230('tariff_20_simple_north_american_inclusive.json'), country_code: 'BE', party_id: 'BEC' };
    const exclusive = (cdr230('x', {})['tariffs'] as Json[])[0] as Json;
    const cdr = { ...cdr230('CDR3', tokenOf('DE', 'NEW')), tariffs: [exclusive, inclusive] };
    await assertValid('ocpi-2.3.0/cdr.json', cdr);
    const posted = await call(hub, 'POST', v230('cdrs'), { token: cpo230.token, body: cdr });
    assert.equal(posted.body.status_code, 1000, posted.text);
    const got = await received(emsp221.partner, 'cdr', 'CDR3');
    await assertValid('ocpi/cdr.json', got.body);
    const prices = (got.body['tariffs'] as Json[]).flatMap((t) => (t['elements'] as Json[]).flatMap((e) => (e['price_components'] as Json[]).map((c) => c['price'])));
    assert.ok(!prices.includes(2.1), `the tax-inclusive 2.10 is no 2.2.1 excl. VAT price: ${JSON.stringify(got.body['tariffs'])}`);
    assert.deepEqual((got.body['tariffs'] as Json[]).map((t) => t['id']), ['12']);
    const back = await call<Json>(hub, 'GET', v230('cdrs/BE/BEC/CDR3'), { token: cpo230.token });
    await assertValid('ocpi-2.3.0/cdr.json', back.body.data);
    const tariffs = back.body.data?.['tariffs'] as Json[];
    assert.deepEqual(tariffs.map((t) => [t['id'], t['tax_included']]).sort(), [['12', 'NO'], [String(inclusive['id']), 'YES']].sort());
    const priceBack = tariffs.find((t) => t['tax_included'] === 'YES') as Json;
    assert.deepEqual(priceBack['elements'], inclusive['elements']);
  });

  it("a 2.2.1 CPO's session and CDR reach the 2.3.0 eMSP as valid 2.3.0 objects, the VAT as one tax", async () => {
    const loc: Json = { ...ocpiExample('location_example_parking_garage_opening_hours.json'), country_code: 'NL', party_id: 'NEW' };
    assert.equal((await call(hub, 'PUT', `/ocpi/2.2.1/locations/NL/NEW/${String(loc['id'])}`, { token: cpo221.token, body: loc })).body.status_code, 1000);
    const evse = (loc['evses'] as Json[])[0] as Json;
    const connector = (evse['connectors'] as Json[])[0] as Json;
    const session = {
      country_code: 'NL', party_id: 'NEW', id: 'S3', start_date_time: '2026-11-26T10:00:00Z', kwh: 1, cdr_token: tokenOf('NL', 'TST'), auth_method: 'WHITELIST',
      location_id: loc['id'], evse_uid: evse['uid'], connector_id: connector['id'], currency: 'EUR', total_cost: { excl_vat: 1, incl_vat: 1.21 }, status: 'ACTIVE', last_updated: '2026-11-26T10:00:00Z',
    };
    const put = await call(hub, 'PUT', '/ocpi/2.2.1/sessions/NL/NEW/S3', { token: cpo221.token, body: session });
    assert.equal(put.body.status_code, 1000, put.text);
    const got = await received(emsp230.partner, 'session', 'S3');
    await assertValid('ocpi-2.3.0/session.json', got.body);
    assert.deepEqual(got.body['total_cost'], { before_taxes: 1, taxes: [{ name: 'VAT', amount: 0.21 }] });
    assert.equal(got.path, '/ocpi/2.3.0/sessions/NL/NEW/S3');
    const cdr221: Json = { ...ocpiExample('cdr_example.json'), country_code: 'NL', party_id: 'NEW', id: 'CDR4', cdr_token: tokenOf('NL', 'TST') };
    const posted = await call(hub, 'POST', '/ocpi/2.2.1/cdrs', { token: cpo221.token, body: cdr221 });
    assert.equal(posted.body.status_code, 1000, posted.text);
    const gotCdr = await received(emsp230.partner, 'cdr', 'CDR4');
    await assertValid('ocpi-2.3.0/cdr.json', gotCdr.body);
    const total = cdr221['total_cost'] as { excl_vat: number; incl_vat?: number };
    assert.equal((gotCdr.body['total_cost'] as Json)['before_taxes'], total.excl_vat);
    assert.ok(!('hub_version_fields' in gotCdr.body));
  });

  it('a 2.3.0 session in 2.2.1 form is refused (2001) and a 2.2.1 caller cannot use the 2.3.0 sessions URL', async () => {
    const wrong = { ...session230('S4', tokenOf('DE', 'NEW')), total_cost: { excl_vat: 1 } };
    const res = await call(hub, 'PUT', v230('sessions/BE/BEC/S4'), { token: cpo230.token, body: wrong });
    assert.equal(res.body.status_code, 2001, res.text);
    const foreign = await call(hub, 'PUT', v230('sessions/NL/NEW/S5'), { token: cpo221.token, body: session230('S5', tokenOf('DE', 'NEW')) });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.status_code, 2000);
  });

  it('a 2.3.0 CDR with signed meter data longer than 2.2.1 holds reaches 2.2.1 eMSPs without it and the CPO reads it back whole', async () => {
    // 2.3.0 allows plain_data of 5000 characters (ocpi-2.3.0/mod_cdrs.asciidoc, SignedValue), 2.2.1 512;
    // an OCMF plain_data is often longer. signed_data is optional in a CDR.
    const signed = { encoding_method: 'OCMF', signed_values: [{ nature: 'Start', plain_data: 'x'.repeat(3000), signed_data: 'sig' }] };
    const long = { ...cdr230('CDR5', tokenOf('DE', 'NEW')), signed_data: signed };
    await assertValid('ocpi-2.3.0/cdr.json', long);
    const res = await call(hub, 'POST', v230('cdrs'), { token: cpo230.token, body: long });
    assert.equal(res.body.status_code, 1000, res.text);
    const got = await received(emsp221.partner, 'cdr', 'CDR5');
    await assertValid('ocpi/cdr.json', got.body);
    assert.ok(!('signed_data' in got.body));
    const back = await call<Json>(hub, 'GET', v230('cdrs/BE/BEC/CDR5'), { token: cpo230.token });
    assert.deepEqual(back.body.data?.['signed_data'], signed);
  });

  it('a 2.3.0 CDR naming a connector standard 2.2.1 has no value for is refused (2001), not sent on to 2.2.1 eMSPs', async () => {
    // A connector standard 2.3.0 added (SAE_J3400) has no 2.2.1 value, as for a Location's connector.
    const cdr = cdr230('CDR6', tokenOf('DE', 'NEW'));
    const j3400 = { ...cdr, cdr_location: { ...(cdr['cdr_location'] as Json), connector_standard: 'SAE_J3400' } };
    const res = await call(hub, 'POST', v230('cdrs'), { token: cpo230.token, body: j3400 });
    assert.equal(res.body.status_code, 2001, res.text);
  });

  it('a 2.3.0 session of a Plug & Charge token (cdr_token type EMAID) reaches a 2.2.1 eMSP with type OTHER', async () => {
    // ocpi-2.3.0/mod_tokens.asciidoc TokenType: EMAID, which 2.2.1 has not.
    const token = { ...tokenOf('DE', 'NEW'), type: 'EMAID' };
    const session = await call(hub, 'PUT', v230('sessions/BE/BEC/S6'), { token: cpo230.token, body: session230('S6', token) });
    assert.equal(session.body.status_code, 1000, session.text);
    const got = await received(emsp221.partner, 'session', 'S6');
    await assertValid('ocpi/session.json', got.body);
    assert.equal((got.body['cdr_token'] as Json)['type'], 'OTHER');
  });

  it('nothing the hub sent the 2.1.1 eMSP breaks the 2.1.1 schemas', () => {
    assert.ok(emsp211.partner.received.length > 0);
    assert.deepEqual(emsp211.partner.violations211, []);
  });
});
