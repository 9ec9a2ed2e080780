// Locations across OCPI 2.3.0 and 2.2.1 (ocpi-2.3.0/mod_locations.asciidoc; docs/reference/
// version-mapping.md, OCPI 2.3.0): a 2.3.0 CPO pushes (PUT, PATCH) the 2.3.0 example with its 2.3.0-only
// fields and a 2.2.1 eMSP pulls a strict 2.2.1 Location without them; a 2.3.0 eMSP gets them back as
// sent; a 2.2.1 CPO's Location reaches a 2.3.0 eMSP as a valid 2.3.0 Location. Real ingress and
// projector processes, real Kafka and Postgres.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, createTestStack, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { assertValid, example211, example230, followPages, freePort, ocpiExample, onboard, onboard211, onboard230, routeEvery, until, type OnboardedPlatform } from './helpers.ts';

type Json = Record<string, unknown>;

describe('OCPI 2.3.0 locations beside 2.2.1', () => {
  let stack: TestStack;
  let ingress: ServiceProcess;
  let projector: ServiceProcess;
  let hub: string;
  let env: Record<string, string>;
  let cpo230: OnboardedPlatform;
  let cpo221: OnboardedPlatform;
  let emsp230: OnboardedPlatform;
  let emsp221: OnboardedPlatform;
  let cpo211: OnboardedPlatform;
  let emsp211: OnboardedPlatform;
  // The 2.3.0 example, its EVSEs with `parking`, plus a 2.3.0-only Location field.
  const location230: Json = { ...example230('location_example.json'), help_phone: '+3212345678' };
  const id = String(location230['id']);

  before(async () => {
    stack = await createTestStack('ocpi230-locations');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1' });
    ingress = await startService('ingress', env, /ingress listening/);
    projector = await startService('projector', env, /projector running/);
    cpo230 = await onboard230(hub, env, 'CPO 2.3.0', { role: 'CPO', countryCode: 'BE', partyId: 'BEC' });
    emsp230 = await onboard230(hub, env, 'eMSP 2.3.0', { role: 'EMSP', countryCode: 'NL', partyId: 'TRI' });
    cpo221 = await onboard(hub, env, 'CPO 2.2.1', [{ role: 'CPO', countryCode: 'NL', partyId: 'NEW' }]);
    emsp221 = await onboard(hub, env, 'eMSP 2.2.1', [{ role: 'EMSP', countryCode: 'DE', partyId: 'NEW' }]);
    cpo211 = await onboard211(hub, env, 'CPO 2.1.1', { role: 'CPO', countryCode: 'FR', partyId: 'OLD' });
    emsp211 = await onboard211(hub, env, 'eMSP 2.1.1', { role: 'EMSP', countryCode: 'IT', partyId: 'EMO' });
    await routeEvery(env, ['NL/TRI', 'DE/NEW'], ['BE/BEC', 'NL/NEW']);
    await routeEvery(env, ['NL/TRI'], ['FR/OLD']);
    await routeEvery(env, ['IT/EMO'], ['BE/BEC']);
  });

  after(async () => {
    await Promise.allSettled([ingress?.stop(), projector?.stop(), cpo230?.partner.close(), cpo221?.partner.close(), emsp230?.partner.close(), emsp221?.partner.close(), cpo211?.partner.close(), emsp211?.partner.close()]);
    await stack?.cleanup();
  });

  const v230 = (path: string) => `/ocpi/2.3.0/${path}`;
  const v221 = (path: string) => `/ocpi/2.2.1/${path}`;
  /** The Location as a pull of `version` lists it, once it is projected (with the PATCHes, when `ready` says so). */
  const pulled = (version: '2.2.1' | '2.3.0', token: string, locationId: string, ready: (l: Json) => boolean = () => true) =>
    until(`${locationId} in a ${version} pull`, async () => (await followPages<Json>(hub, `/ocpi/${version}/locations?limit=50`, token)).items.find((l) => l['id'] === locationId && ready(l)));
  const patched = (l: Json) => l['name'] === 'Interparking Gent Zuid' && (l['evses'] as Json[]).some((e) => e['uid'] === '3256' && e['status'] === 'CHARGING');

  it('a 2.3.0 CPO PUTs the 2.3.0 Location example with help_phone and EVSE parking', async () => {
    await assertValid('ocpi-2.3.0/location.json', location230);
    const res = await call(hub, 'PUT', v230(`locations/BE/BEC/${id}`), { token: cpo230.token, body: location230 });
    assert.equal(res.body.status_code, 1000, res.text);
    // The answer's routing headers (transport_and_format.asciidoc, Message Routing): TO the CPO that asked.
    assert.deepEqual([res.headers['ocpi-to-country-code'], res.headers['ocpi-to-party-id']], ['BE', 'BEC']);
    assert.ok(res.headers['ocpi-from-party-id'], 'FROM the hub');
  });

  it('a 2.3.0 CPO PATCHes an EVSE status and the Location name (the 2.3.0 PATCH examples)', async () => {
    const evse = await call(hub, 'PATCH', v230(`locations/BE/BEC/${id}/3256`), { token: cpo230.token, body: example230('location_patch_example_status.json') });
    assert.equal(evse.body.status_code, 1000, evse.text);
    const location = await call(hub, 'PATCH', v230(`locations/BE/BEC/${id}`), { token: cpo230.token, body: example230('location_patch_example_location.json') });
    assert.equal(location.body.status_code, 1000, location.text);
  });

  it('2001 for a 2.3.0 PATCH without last_updated (required since 2.2) and for an address the canonical 2.2.1 form cannot hold', async () => {
    const noTime = await call(hub, 'PATCH', v230(`locations/BE/BEC/${id}/3256`), { token: cpo230.token, body: { status: 'AVAILABLE' } });
    assert.equal(noTime.body.status_code, 2001, noTime.text);
    assert.match(String(noTime.body.status_message), /last_updated/);
    const long = { ...location230, id: 'LONG', address: 'A'.repeat(100) };
    await assertValid('ocpi-2.3.0/location.json', long);
    const res = await call(hub, 'PUT', v230('locations/BE/BEC/LONG'), { token: cpo230.token, body: long });
    assert.equal(res.body.status_code, 2001, res.text);
    assert.match(String(res.body.status_message), /address/);
  });

  it("a 2.2.1 eMSP pulls the 2.3.0 CPO's Location as a strict 2.2.1 Location, patched, without 2.3.0-only fields", async () => {
    const location = await pulled('2.2.1', emsp221.token, id, patched);
    assert.ok(location, 'pulled');
    await assertValid('ocpi/location.json', location);
    assert.equal(location['name'], 'Interparking Gent Zuid');
    assert.equal(location['country_code'], 'BE');
    const evses = location['evses'] as Json[];
    assert.equal(evses.find((e) => e['uid'] === '3256')?.['status'], 'CHARGING');
    for (const hidden of ['help_phone', 'hub_version_fields']) assert.ok(!(hidden in location), hidden);
    assert.ok(evses.every((e) => !('parking' in e)), 'EVSE parking is 2.3.0 only');
    assert.ok(!JSON.stringify(location).includes('hub_version_fields'));
    // One Location by its ids, in 2.2.1 as well.
    const one = await call<Json>(hub, 'GET', v221(`locations/BE/BEC/${id}`), { token: emsp221.token });
    assert.equal(one.body.status_code, 1000, one.text);
    assert.ok(!('help_phone' in (one.body.data ?? {})));
  });

  it('a 2.3.0 eMSP pulls it in 2.3.0 form, with what the 2.3.0 CPO sent', async () => {
    const location = await pulled('2.3.0', emsp230.token, id, patched);
    assert.ok(location, 'pulled');
    await assertValid('ocpi-2.3.0/location.json', location);
    assert.equal(location['help_phone'], '+3212345678');
    assert.equal(location['name'], 'Interparking Gent Zuid');
    const evse = (location['evses'] as Json[]).find((e) => e['uid'] === '3256');
    assert.equal(evse?.['status'], 'CHARGING');
    assert.deepEqual(evse?.['parking'], [{ parking_id: '1', evse_position: 'LEFT' }, { parking_id: '2', evse_position: 'RIGHT' }]);
    assert.ok(!('hub_version_fields' in location));
  });

  it("a 2.2.1 CPO's Location reaches a 2.3.0 eMSP pull as a valid 2.3.0 Location", async () => {
    const location: Json = { ...ocpiExample('location_example_parking_garage_opening_hours.json'), country_code: 'NL', party_id: 'NEW' };
    const res = await call(hub, 'PUT', v221(`locations/NL/NEW/${String(location['id'])}`), { token: cpo221.token, body: location });
    assert.equal(res.body.status_code, 1000, res.text);
    const seen = await pulled('2.3.0', emsp230.token, String(location['id']));
    assert.ok(seen, 'pulled');
    await assertValid('ocpi-2.3.0/location.json', seen);
    assert.equal(seen['country_code'], 'NL');
    assert.equal(seen['name'], location['name']);
    assert.ok(!('help_phone' in seen) && !('hub_version_fields' in seen));
    const one = await call<Json>(hub, 'GET', v230(`locations/NL/NEW/${String(location['id'])}`), { token: emsp230.token });
    assert.equal(one.body.status_code, 1000, one.text);
    await assertValid('ocpi-2.3.0/location.json', one.body.data);
  });

  it("a 2.1.1 eMSP pulls the 2.3.0 CPO's Location as a valid 2.1.1 Location, without 2.3.0-only fields", async () => {
    const location = await until('the Location in a 2.1.1 pull', async () => (await followPages<Json>(hub, '/ocpi/2.1.1/locations?limit=50', emsp211.token)).items.find((l) => l['id'] === id && l['name'] === 'Interparking Gent Zuid'));
    await assertValid('ocpi-2.1.1/location.json', location);
    assert.ok(!('help_phone' in location) && !('hub_version_fields' in location));
    assert.ok((location['evses'] as Json[]).every((e) => !('parking' in e)), 'EVSE parking is 2.3.0 only');
  });

  it("a 2.1.1 CPO's Location reaches a 2.3.0 eMSP pull as a valid 2.3.0 Location", async () => {
    // mod_locations.md 3.1 (2.1.1): no country_code or party_id; the hub takes the CPO's.
    const location = example211('mod_locations.md', '### 3.1 _Location_ Object');
    const locationId = String(location['id']);
    const res = await call(hub, 'PUT', `/ocpi/2.1.1/locations/FR/OLD/${locationId}`, { token: cpo211.token, body: location });
    assert.equal(res.body.status_code, 1000, res.text);
    const seen = await pulled('2.3.0', emsp230.token, locationId, (l) => l['party_id'] === 'OLD');
    await assertValid('ocpi-2.3.0/location.json', seen);
    assert.deepEqual([seen['country_code'], seen['party_id']], ['FR', 'OLD']);
    assert.ok(!('hub_version_fields' in seen));
  });

  it('what a 2.3.0 EVSE PUT and Location PATCH keep reaches 2.3.0 readers of the Location and the EVSE, never 2.2.1 or 2.1.1 readers; a PATCH replaces a kept list', async () => {
    const evse = (location230['evses'] as Json[]).find((e) => e['uid'] === '3257') as Json;
    const parking = [{ parking_id: '9', evse_position: 'LEFT' }];
    const put = await call(hub, 'PUT', v230(`locations/BE/BEC/${id}/3257`), { token: cpo230.token, body: { ...evse, parking, capabilities: ['RFID_READER', 'ISO_15118_20_PLUG_AND_CHARGE'], last_updated: '2030-01-01T00:00:00Z' } });
    assert.equal(put.body.status_code, 1000, put.text);
    // Facility is an OpenEnum (ocpi-2.3.0/mod_locations.asciidoc): EV_LOUNGE has no 2.2.1 value and is kept.
    const first = await call(hub, 'PATCH', v230(`locations/BE/BEC/${id}`), { token: cpo230.token, body: { facilities: ['WIFI', 'EV_LOUNGE'], last_updated: '2030-01-01T00:00:01Z' } });
    assert.equal(first.body.status_code, 1000, first.text);
    const second = await call(hub, 'PATCH', v230(`locations/BE/BEC/${id}`), { token: cpo230.token, body: { facilities: ['WIFI'], last_updated: '2030-01-01T00:00:02Z' } });
    assert.equal(second.body.status_code, 1000, second.text);
    const done = (l: Json) => l['last_updated'] === '2030-01-01T00:00:02Z';
    const location = await pulled('2.3.0', emsp230.token, id, done);
    await assertValid('ocpi-2.3.0/location.json', location);
    const pulledEvse = (location['evses'] as Json[]).find((e) => e['uid'] === '3257');
    assert.deepEqual(pulledEvse?.['parking'], parking);
    assert.deepEqual(pulledEvse?.['capabilities'], ['RFID_READER', 'ISO_15118_20_PLUG_AND_CHARGE']);
    assert.deepEqual(location['facilities'], ['WIFI'], 'the PATCH replaced the kept list');
    const detail = await call<Json>(hub, 'GET', v230(`locations/BE/BEC/${id}/3257`), { token: emsp230.token });
    assert.deepEqual(detail.body.data?.['parking'], parking);
    const as221 = await pulled('2.2.1', emsp221.token, id, done);
    assert.ok(!JSON.stringify(as221).includes('hub_version_fields'), JSON.stringify(as221));
    await assertValid('ocpi/location.json', as221);
    assert.deepEqual((as221['evses'] as Json[]).find((e) => e['uid'] === '3257')?.['capabilities'], ['RFID_READER']);
    const evse221 = await call<Json>(hub, 'GET', v221(`locations/BE/BEC/${id}/3257`), { token: emsp221.token });
    assert.ok(!JSON.stringify(evse221.body).includes('hub_version_fields'), evse221.text);
    const as211 = await until('the Location in a 2.1.1 pull', async () => (await followPages<Json>(hub, '/ocpi/2.1.1/locations?limit=50', emsp211.token)).items.find((l) => l['id'] === id && l['last_updated'] === '2030-01-01T00:00:02Z'));
    assert.ok(!JSON.stringify(as211).includes('hub_version_fields'), JSON.stringify(as211));
    // A later EVSE PUT without parking replaces what was kept of the EVSE.
    const { parking: _sent, ...withoutParking } = evse;
    const again = await call(hub, 'PUT', v230(`locations/BE/BEC/${id}/3257`), { token: cpo230.token, body: { ...withoutParking, last_updated: '2030-01-01T00:00:03Z' } });
    assert.equal(again.body.status_code, 1000, again.text);
    const replaced = await pulled('2.3.0', emsp230.token, id, (l) => l['last_updated'] === '2030-01-01T00:00:03Z');
    const replacedEvse = (replaced['evses'] as Json[]).find((e) => e['uid'] === '3257');
    assert.ok(!('parking' in (replacedEvse ?? {})), JSON.stringify(replacedEvse));
  });

  it('an undocumented member nested in a 2.3.0 Location is accepted, not refused (ocpi-2.3.0/transport_and_format.asciidoc, Non-specified JSON fields)', async () => {
    // Two long names alike in their first 40 characters: a refusal message would shorten both the same way.
    const vendor = 'x_vendor_extension_field_of_some_length_';
    const withAltitude = { ...location230, id: 'ALT', coordinates: { ...(location230['coordinates'] as Json), altitude: '12.5', [`${vendor}a`]: 1, [`${vendor}b`]: 2 } };
    await assertValid('ocpi-2.3.0/location.json', withAltitude);
    const res = await call(hub, 'PUT', v230('locations/BE/BEC/ALT'), { token: cpo230.token, body: withAltitude });
    assert.equal(res.body.status_code, 1000, res.text);
    // The canonical form has no place for it: 2.2.1 readers get a strict 2.2.1 Location.
    const as221 = await pulled('2.2.1', emsp221.token, 'ALT');
    await assertValid('ocpi/location.json', as221);
    assert.deepEqual(as221['coordinates'], location230['coordinates']);
  });

  it('a 2.2.1 caller cannot use the 2.3.0 locations URL', async () => {
    const res = await call(hub, 'GET', v230('locations'), { token: emsp221.token });
    assert.equal(res.status, 404);
    assert.equal(res.body.status_code, 2000);
  });
});
