// ChargingProfiles through the hub (mod_charging_profiles.asciidoc, Receiver and Sender interfaces), in
// process on the in-memory ports with a scripted CPO: who may ask for which session, what is
// forwarded where, and what the hub answers itself.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { topics } from '@hub/events';
import { expectOcpi, type Arrange, type InMemoryHub } from '@hub/testing';
import { as, cpo, CPO, emsp, EMSP, ingress, platform, routed, tokens } from './support/ingress-spec.ts';

const OTHER_EMSP = { countryCode: 'DE', partyId: 'EMC', role: 'EMSP' as const };
const cpoReceives = cpo({ endpoints: [{ identifier: 'chargingprofiles', role: 'RECEIVER', url: 'https://cpa.example/ocpi/chargingprofiles/' }] });
const emspRegistered = emsp({ endpoints: [{ identifier: 'chargingprofiles', role: 'SENDER', url: 'https://emb.example/ocpi/chargingprofiles' }] });
const cpoAnswers = (data: unknown): Arrange<InMemoryHub> => (hub) => hub.realtime.answerWith(() => ({ httpStatus: 200, envelope: { status_code: 1000, data } }));
/** A session the CPO pushed and the hub delivered to `to` (a session row). */
const sessionOf = (id: string, to: { countryCode: string; partyId: string } = EMSP): Arrange<InMemoryHub> => async (hub) => {
  await hub.deliveries.enqueue([{ kind: 'session', emsp: { countryCode: to.countryCode, partyId: to.partyId }, cpo: { countryCode: CPO.countryCode, partyId: CPO.partyId }, objectId: id, partition: 0, offset: '1', payload: { id }, correlationId: undefined, eventTime: new Date().toISOString() }]);
};
const profile = { charging_rate_unit: 'A', charging_profile_period: [{ start_period: 0, limit: 16 }] };
const set = (sessionId: string, body: unknown = { charging_profile: profile, response_url: 'https://emb.example/r/1' }, headers: Record<string, string> = {}) =>
  as(tokens.emsp, { method: 'PUT', path: `/ocpi/2.2.1/chargingprofiles/${sessionId}`, headers, body });
const forwarded = (hub: InMemoryHub) => hub.realtime.calls.filter((c) => c.url.startsWith('https://cpa.example/'));

describe('charging profiles: the eMSP side (Receiver interface)', () => {

  it('NOT_SUPPORTED from the hub for a 2.1.1 CPO, whatever it registered (2.1.1 has no chargingprofiles module); nothing forwarded', () =>
    ingress
      .given(cpo({ version: '2.1.1', endpoints: [{ identifier: 'chargingprofiles', role: 'RECEIVER', url: 'https://cpa.example/ocpi/chargingprofiles/' }] }), emspRegistered, routed(), sessionOf('S1'))
      .when(set('S1'))
      .then(expectOcpi(200, 1000), (res) => assert.equal((res.body?.data as { result?: string } | undefined)?.result, 'NOT_SUPPORTED'), (_res, hub) => assert.equal(forwarded(hub).length, 0)));
  it('forwards a set to the CPO of the session with the hub callback and returns its answer unchanged', () =>
    ingress
      .given(cpoReceives, emspRegistered, routed(), sessionOf('S1'), cpoAnswers({ result: 'TOO_OFTEN', timeout: 5 }))
      .when(set('s1'))
      .then(expectOcpi(200, 1000), (res, hub) => {
        assert.deepEqual(res.body?.data, { result: 'TOO_OFTEN', timeout: 5 });
        const call = forwarded(hub)[0];
        assert.equal(call?.method, 'PUT');
        assert.equal(call?.url, 'https://cpa.example/ocpi/chargingprofiles/s1');
        assert.match(String((call?.body as { response_url?: string }).response_url), /^http:\/\/hub\.test\/ocpi\/2\.2\.1\/chargingprofiles\/callback\/[0-9a-f-]{36}$/);
        assert.deepEqual([call?.headers['ocpi-from-party-id'], call?.headers['ocpi-to-party-id']], ['EMB', 'CPA']);
        assert.deepEqual(hub.events.appended(topics.chargingProfiles).map((e) => e.type), ['ocpi.chargingprofiles.requested.v1', 'ocpi.chargingprofiles.cpo-responded.v1']);
      }));

  it('forwards a get with duration and the hub callback in the query', () =>
    ingress
      .given(cpoReceives, emspRegistered, routed(), sessionOf('S1'), cpoAnswers({ result: 'ACCEPTED', timeout: 30 }))
      .when(as(tokens.emsp, { method: 'GET', path: `/ocpi/2.2.1/chargingprofiles/S1?duration=900&response_url=${encodeURIComponent('https://emb.example/r/2')}` }))
      .then(expectOcpi(200, 1000), (_res, hub) => {
        const call = forwarded(hub)[0];
        assert.equal(call?.method, 'GET');
        assert.match(call?.url ?? '', /^https:\/\/cpa\.example\/ocpi\/chargingprofiles\/S1\?duration=900&response_url=http%3A%2F%2Fhub\.test%2Focpi%2F2\.2\.1%2Fchargingprofiles%2Fcallback%2F[0-9a-f-]{36}$/);
      }));

  it('404 / 2000 naming the session for a session of another eMSP; nothing forwarded or appended', () =>
    ingress
      .given(cpoReceives, emspRegistered, routed(), sessionOf('S2', OTHER_EMSP))
      .when(set('S2'))
      .then(expectOcpi(404, 2000, /unknown session S2/), (_res, hub) => {
        assert.equal(forwarded(hub).length, 0);
        assert.equal(hub.events.appended(topics.chargingProfiles).length, 0);
      }));

  it('REJECTED from the hub without a routing rule; NOT_SUPPORTED when the CPO has no chargingprofiles receiver', async () => {
    await ingress
      .given(cpoReceives, emspRegistered, sessionOf('S1'))
      .when(set('S1'))
      .then(expectOcpi(200, 1000, /no active routing rule/), (res, hub) => {
        assert.deepEqual(res.body?.data, { result: 'REJECTED', timeout: 0 });
        assert.equal(forwarded(hub).length, 0);
      });
    await ingress
      .given(cpo(), emspRegistered, routed(), sessionOf('S1'))
      .when(set('S1'))
      .then(expectOcpi(200, 1000, /NL\/CPA has no chargingprofiles receiver/), (res, hub) => {
        assert.deepEqual(res.body?.data, { result: 'NOT_SUPPORTED', timeout: 0 });
        assert.equal(hub.realtime.calls.length, 0);
      });
  });

  it('2001 for a limit with two digits of fraction, a missing duration, an unregistered response_url host and one too long', async () => {
    const given = [cpoReceives, emspRegistered, routed(), sessionOf('S1')];
    await ingress.given(...given).when(set('S1', { charging_profile: { ...profile, charging_profile_period: [{ start_period: 0, limit: 8.15 }] }, response_url: 'https://emb.example/r' })).then(expectOcpi(200, 2001, /limit: accepts at most one digit fraction/));
    await ingress.given(...given).when(set('S1', { charging_profile: { ...profile, min_charging_rate: 8.1 }, response_url: 'https://elsewhere.example/r' })).then(expectOcpi(200, 2001, /not one this eMSP registered/));
    await ingress.given(...given).when(as(tokens.emsp, { method: 'GET', path: '/ocpi/2.2.1/chargingprofiles/S1?response_url=https%3A%2F%2Femb.example%2Fr' })).then(expectOcpi(200, 2001, /duration/));
    await ingress.given(...given).when(as(tokens.emsp, { method: 'DELETE', path: `/ocpi/2.2.1/chargingprofiles/S1?response_url=${encodeURIComponent(`https://emb.example/${'r'.repeat(250)}`)}` })).then(expectOcpi(200, 2001, /longer than 255/));
  });

  it('403 for credentials without an eMSP role', () => ingress.given(cpoReceives, routed(), sessionOf('S1')).when(as(tokens.cpo, { method: 'PUT', path: '/ocpi/2.2.1/chargingprofiles/S1', body: { charging_profile: profile, response_url: 'https://cpa.example/r' } })).then(expectOcpi(403, 2000)));
});

describe('charging profiles: the CPO side (Sender interface)', () => {
  const update = (sessionId: string, at = '2026-11-26T10:00:00Z') => as(tokens.cpo, { method: 'PUT', path: `/ocpi/2.2.1/chargingprofiles/sender/${sessionId}`, body: { start_date_time: at, charging_profile: profile } });

  it("queues an ActiveChargingProfile for the session's eMSP only, with an event", () =>
    ingress
      .given(cpoReceives, emspRegistered, platform({ parties: [OTHER_EMSP], token: tokens.other }), routed(), sessionOf('S1'), sessionOf('S2', OTHER_EMSP))
      .when(update('S1'))
      .then(expectOcpi(200, 1000), (_res, hub) => {
        const rows = hub.deliveries.enqueued.filter((d) => d.kind === 'active_charging_profile');
        assert.deepEqual(rows.map((r) => [r.emsp.partyId, r.cpo.partyId, r.objectId]), [['EMB', 'CPA', 'S1']]);
        const [event] = hub.events.appended(topics.chargingProfiles);
        assert.deepEqual([event?.type, event?.key, event?.to], ['ocpi.chargingprofiles.active-profile-put.v1', 'NL/CPA/S1', 'DE/EMB']);
      }));

  it('404 / 2000 for a session the CPO did not push; 403 for an eMSP', async () => {
    await ingress.given(cpoReceives, emspRegistered, routed()).when(update('NOPE')).then(expectOcpi(404, 2000, /unknown session NOPE/));
    await ingress.given(cpoReceives, emspRegistered, routed(), sessionOf('S1')).when(as(tokens.emsp, { method: 'PUT', path: '/ocpi/2.2.1/chargingprofiles/sender/S1', body: { start_date_time: '2026-11-26T10:00:00Z', charging_profile: profile } })).then(expectOcpi(403, 2000));
  });
});
