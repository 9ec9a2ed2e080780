// Location and tariff push and pull rules (mod_locations.asciidoc, mod_tariffs.asciidoc; interface
// document, Locations and tariffs), in process on the in-memory ports.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newEvent, tariffEventTypes, topics } from '@hub/events';
import { objectKey, pathSubject } from '@hub/modules';
import { expectOcpi, type Expectation, type InMemoryHub } from '@hub/testing';
import { as, cpo, CPO, emsp, ingress, platform, routed, tokens } from './support/ingress-spec.ts';
import { location, storedLocations, tariff } from './support/objects.ts';

const appended = (topic: string, n: number): Expectation<InMemoryHub> => (_res, hub) => assert.equal(hub.events.appended(topic).length, n, `events appended to ${topic}`);
const put = (path: string, body: unknown) => as(tokens.cpo, { method: 'PUT', path: `/ocpi/2.2.1/locations/${path}`, body });
const patch = (path: string, body: unknown) => as(tokens.cpo, { method: 'PATCH', path: `/ocpi/2.2.1/locations/${path}`, body });

/** The answer's routing headers (transport_and_format.asciidoc, Message Routing: "Hub to requesting platform"). */
const routedAnswer = (to: string | null, from: string): Expectation<InMemoryHub> => (res) => {
  const pair = (side: string) => {
    const cc = res.headers.get(`ocpi-${side}-country-code`);
    const pid = res.headers.get(`ocpi-${side}-party-id`);
    return cc === null && pid === null ? null : `${cc ?? ''}/${pid ?? ''}`;
  };
  assert.deepEqual([pair('to'), pair('from')], [to, from]);
};

describe('the routing headers of an answer', () => {
  it('a CPO push is answered TO the CPO, FROM the hub; a refusal carries them too', async () => {
    await ingress.given(cpo()).when(put('NL/CPA/LOC1', location('LOC1'))).then(expectOcpi(200, 1000), routedAnswer('NL/CPA', 'NL/HUB'));
    await ingress.given(cpo()).when(put('NL/CPA/LOC1', [location('LOC1')])).then(expectOcpi(200, 2001), routedAnswer('NL/CPA', 'NL/HUB'));
  });

  it('a request naming its parties in OCPI-from and OCPI-to is answered TO the one, FROM the other', () =>
    ingress
      .given(cpo())
      .when(as(tokens.cpo, { method: 'PUT', path: '/ocpi/2.2.1/locations/NL/CPA/LOC1', body: location('LOC1'), headers: { 'ocpi-from-country-code': 'nl', 'ocpi-from-party-id': 'cpa', 'ocpi-to-country-code': 'DE', 'ocpi-to-party-id': 'EMB' } }))
      .then(routedAnswer('NL/CPA', 'DE/EMB')));

  it('echoes only a party of the caller as TO and only a well-formed party as FROM; a malformed header never breaks the answer', () =>
    ingress
      .given(cpo())
      .when(as(tokens.cpo, { method: 'PUT', path: '/ocpi/2.2.1/locations/NL/CPA/LOC1', body: location('LOC1'), headers: { 'ocpi-from-country-code': 'DE', 'ocpi-from-party-id': 'XYZ', 'ocpi-to-country-code': 'DE', 'ocpi-to-party-id': 'E\u00b5B' } }))
      .then(expectOcpi(200, 1000), routedAnswer('NL/CPA', 'NL/HUB')));

});

describe('location pushes', () => {
  it('accepts a valid PUT of the caller’s own location and appends one event', () =>
    ingress.given(cpo()).when(put('NL/CPA/LOC1', location('LOC1'))).then(expectOcpi(200, 1000), appended(topics.locations, 1)));

  it('2001 for a body that breaks the schema, naming the violation; nothing appended', () =>
    ingress
      .given(cpo())
      .when(put('NL/CPA/LOC1', { ...location('LOC1'), coordinates: { latitude: 'north' } }))
      .then(expectOcpi(200, 2001, /coordinates/), appended(topics.locations, 0)));

  it('2001 for a body that is not a JSON object', async () => {
    await ingress.given(cpo()).when(put('NL/CPA/LOC1', [location('LOC1')])).then(expectOcpi(200, 2001, /JSON object/));
    await ingress.given(cpo()).when(put('NL/CPA/LOC1', '{"id": ')).then(expectOcpi(400, 2001));
  });

  it('2001 for malformed path parameters (country_code, party_id, empty segments, long ids)', async () => {
    await ingress.given(cpo()).when(put('NLD/CPA/LOC1', location('LOC1'))).then(expectOcpi(200, 2001, /country_code/));
    await ingress.given(cpo()).when(put('NL/C-A/LOC1', location('LOC1'))).then(expectOcpi(200, 2001, /party_id/));
    await ingress.given(cpo()).when(put('NL/CPA//1', location('LOC1'))).then(expectOcpi(200, 2001, /location_id in the path must not be empty/));
    await ingress.given(cpo()).when(put(`NL/CPA/${'X'.repeat(37)}`, location('X'.repeat(37)))).then(expectOcpi(200, 2001, /id must be 1 to 36/));
  });

  it('2001 when an id in the body differs from the path; CiStrings compare case-insensitively', async () => {
    await ingress.given(cpo()).when(put('NL/CPA/LOC1', location('LOC2'))).then(expectOcpi(200, 2001, /id in the body \("LOC2"\) differs/), appended(topics.locations, 0));
    await ingress.given(cpo()).when(put('NL/CPA/LOC1', { ...location('LOC1'), party_id: 'CPB' })).then(expectOcpi(200, 2001, /party_id in the body/));
    await ingress.given(cpo()).when(put('nl/cpa/loc1', location('LOC1'))).then(expectOcpi(200, 1000));
  });

  it('403 for a push under a country_code/party_id the credentials do not name as CPO', async () => {
    await ingress.given(cpo()).when(put('DE/XYZ/LOC1', { ...location('LOC1'), country_code: 'DE', party_id: 'XYZ' })).then(expectOcpi(403, 2000, /do not act as CPO DE\/XYZ/));
    // An eMSP may not push locations under its own ids either: it is not a CPO role.
    await ingress.given(emsp()).when(as(tokens.emsp, { method: 'PUT', path: '/ocpi/2.2.1/locations/DE/EMB/LOC1', body: location('LOC1') })).then(expectOcpi(403, 2000));
  });

  it('2003 for a PATCH of an unknown location, EVSE or connector, and for an EVSE PUT into an unknown location', async () => {
    const status = { status: 'CHARGING', last_updated: '2026-01-02T00:00:00Z' };
    await ingress.given(cpo()).when(patch('NL/CPA/NOPE', { last_updated: '2026-01-02T00:00:00Z' })).then(expectOcpi(200, 2003), appended(topics.locations, 0));
    await ingress.given(cpo(), storedLocations('LOC1')).when(patch('NL/CPA/LOC1/NOPE', status)).then(expectOcpi(200, 2003, /unknown EVSE/));
    await ingress.given(cpo(), storedLocations('LOC1')).when(patch('NL/CPA/LOC1/EVSE1/9', { last_updated: '2026-01-02T00:00:00Z' })).then(expectOcpi(200, 2003, /unknown connector/));
    const evse = location('X').evses?.[0];
    await ingress.given(cpo()).when(put('NL/CPA/NOPE/EVSE1', evse)).then(expectOcpi(200, 2003, /unknown location/));
  });

  it('2001 for a PATCH without last_updated', () =>
    ingress.given(cpo(), storedLocations('LOC1')).when(patch('NL/CPA/LOC1', { name: 'x' })).then(expectOcpi(200, 2001, /last_updated/)));

  it('accepts a PATCH of a stored EVSE and appends it', () =>
    ingress
      .given(cpo(), storedLocations('LOC1'))
      .when(patch('NL/CPA/LOC1/evse1', { status: 'CHARGING', last_updated: '2026-01-02T00:00:00Z' }))
      .then(expectOcpi(200, 1000), appended(topics.locations, 1)));

  it('503 with Retry-After when the event log is unavailable; nothing accepted', () =>
    ingress
      .given(cpo(), (hub) => hub.events.unavailable())
      .when(put('NL/CPA/LOC1', location('LOC1')))
      .then(expectOcpi(503, 3000), (res) => assert.equal(res.headers.get('Retry-After'), '5')));
});

describe('location and tariff reads', () => {
  it('the owning CPO reads its own location without a routing rule', () =>
    ingress
      .given(cpo(), storedLocations('LOC1'))
      .when(as(tokens.cpo, { method: 'GET', path: '/ocpi/2.2.1/locations/NL/CPA/loc1' }))
      .then(expectOcpi(200, 1000), (res) => assert.equal((res.body?.data as { id?: string }).id, 'LOC1')));

  it('404 / 2003 for an unknown location, EVSE or connector; 404 / 2000 for an unknown tariff', async () => {
    const get = (path: string) => as(tokens.emsp, { method: 'GET', path });
    await ingress.given(cpo(), emsp(), routed()).when(get('/ocpi/2.2.1/locations/NL/CPA/NOPE')).then(expectOcpi(404, 2003));
    await ingress.given(cpo(), emsp(), routed(), storedLocations('LOC1')).when(get('/ocpi/2.2.1/locations/NL/CPA/LOC1/NOPE')).then(expectOcpi(404, 2003));
    await ingress.given(cpo(), emsp(), routed(), storedLocations('LOC1')).when(get('/ocpi/2.2.1/locations/NL/CPA/LOC1/EVSE1/9')).then(expectOcpi(404, 2003));
    await ingress.given(cpo(), emsp(), routed()).when(get('/ocpi/2.2.1/tariffs/NL/CPA/NOPE')).then(expectOcpi(404, 2000));
  });

  it('an eMSP without a routing rule to the CPO does not see its location (404), with one it does', async () => {
    const get = as(tokens.emsp, { method: 'GET', path: '/ocpi/2.2.1/locations/NL/CPA/LOC1/EVSE1' });
    await ingress.given(cpo(), emsp(), storedLocations('LOC1')).when(get).then(expectOcpi(404, 2003));
    await ingress
      .given(cpo(), emsp(), routed(), storedLocations('LOC1'))
      .when(get)
      .then(expectOcpi(200, 1000), (res) => assert.equal((res.body?.data as { uid?: string }).uid, 'EVSE1'));
  });

  it('a tariff DELETE of an unknown tariff is 404 / 2000; of a pushed one, accepted', async () => {
    const del = as(tokens.cpo, { method: 'DELETE', path: '/ocpi/2.2.1/tariffs/NL/CPA/T1' });
    await ingress.given(cpo()).when(del).then(expectOcpi(404, 2000, /unknown tariff/));
    const pushed = (hub: InMemoryHub) => ingressPut(hub);
    await ingress.given(cpo(), pushed).when(del).then(expectOcpi(200, 1000), appended(topics.tariffs, 2));
  });

  it('a suspended party’s platform with another active role still pushes, but not as the suspended CPO', () =>
    ingress
      .given(platform({ parties: [CPO, { countryCode: 'NL', partyId: 'EMX', role: 'EMSP' }], token: tokens.other }), (hub) => hub.registry.setSuspended(CPO, true, []))
      .when(as(tokens.other, { method: 'PUT', path: '/ocpi/2.2.1/locations/NL/CPA/LOC1', body: location('LOC1') }))
      .then(expectOcpi(403, 2000)));
});

/** A tariff pushed through the event log, as a previous PUT leaves it. */
async function ingressPut(hub: InMemoryHub): Promise<void> {
  const path = { ...CPO, id: 'T1' };
  await hub.events.append(topics.tariffs, [newEvent({ type: tariffEventTypes.tariffPut, source: 'test', subject: pathSubject(path), key: objectKey(path), data: tariff('T1') })]);
}
