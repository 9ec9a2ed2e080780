// Real-time forwards: token authorization and commands (interface document, Token authorization,
// Commands, Errors; mod_tokens.asciidoc, mod_commands.asciidoc), in process on the in-memory ports
// with a scripted CPO.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { topics } from '@hub/events';
import { expectOcpi, type Arrange, type InMemoryHub } from '@hub/testing';
import { as, cpo, emsp, EMSP, ingress, platform, routed, tokens } from './support/ingress-spec.ts';
import { storedLocations } from './support/objects.ts';

const authorize = (path: string, headers: Record<string, string> = {}, body?: unknown) =>
  as(tokens.emsp, { method: 'PUT', path: `/ocpi/2.2.1/tokens/${path}/authorize`, headers, ...(body !== undefined ? { body } : {}) });
const toCpo = { 'ocpi-to-country-code': 'NL', 'ocpi-to-party-id': 'CPA' };
const cpoReceives = cpo({ endpoints: [{ identifier: 'tokens', role: 'RECEIVER', url: 'https://cpa.example/ocpi/tokens' }, { identifier: 'commands', role: 'RECEIVER', url: 'https://cpa.example/ocpi/commands' }] });
const emspWithCallback = emsp({ endpoints: [{ identifier: 'sessions', role: 'RECEIVER', url: 'https://emb.example/ocpi/sessions' }] });
const cpoAnswers = (data: unknown, statusCode = 1000): Arrange<InMemoryHub> => (hub) => hub.realtime.answerWith(() => ({ httpStatus: 200, envelope: { status_code: statusCode, data } }));
const command = (name: string, body: unknown, headers: Record<string, string> = {}) => as(tokens.emsp, { method: 'POST', path: `/ocpi/2.2.1/commands/${name}`, headers, body });

describe('token authorization', () => {
  it('403 for a token of an eMSP the credentials do not name', () =>
    ingress.given(cpoReceives, emsp(), routed()).when(authorize('DE/XYZ/TOKEN1', toCpo)).then(expectOcpi(403, 2000, /do not act as eMSP DE\/XYZ/)));

  it('2002 when neither OCPI-to headers nor a location_id name the CPO', () =>
    ingress.given(cpoReceives, emsp(), routed()).when(authorize('DE/EMB/TOKEN1')).then(expectOcpi(200, 2002)));

  it('2003 when no routed CPO has the location', () =>
    ingress.given(cpoReceives, emsp(), routed()).when(authorize('DE/EMB/TOKEN1', {}, { location_id: 'NOPE' })).then(expectOcpi(200, 2003)));

  it('4001 without a routing rule to the CPO; nothing forwarded', () =>
    ingress
      .given(cpoReceives, emsp())
      .when(authorize('DE/EMB/TOKEN1', toCpo))
      .then(expectOcpi(200, 4001, /no active routing rule/), (_res, hub) => assert.equal(hub.realtime.calls.length, 0)));

  it('forwards to the CPO that owns the location and returns its answer unchanged', () =>
    ingress
      .given(cpoReceives, emsp(), routed(), storedLocations('LOC1'), cpoAnswers({ allowed: 'ALLOWED', token: { uid: 'TOKEN1' } }))
      .when(authorize('DE/EMB/TOKEN1', {}, { location_id: 'LOC1' }))
      .then(expectOcpi(200, 1000), (res, hub) => {
        assert.deepEqual(res.body?.data, { allowed: 'ALLOWED', token: { uid: 'TOKEN1' } });
        assert.equal(hub.realtime.calls[0]?.url, 'https://cpa.example/ocpi/tokens/DE/EMB/TOKEN1/authorize');
        assert.equal(hub.realtime.calls[0]?.headers['ocpi-to-party-id'], 'CPA');
      }));

  it('an unreachable CPO yields 4003 with allowed UNKNOWN', () =>
    ingress
      .given(cpoReceives, emsp(), routed())
      .when(authorize('DE/EMB/TOKEN1', toCpo))
      .then(expectOcpi(200, 4003), (res) => assert.deepEqual(res.body?.data, { allowed: 'UNKNOWN' })));
});

describe('commands', () => {
  const start = { response_url: 'https://emb.example/ocpi/cb/1', token: { country_code: 'DE', party_id: 'EMB', uid: 'TOKEN1', type: 'RFID', contract_id: 'DE-EMB-C1', issuer: 'EMB', valid: true, whitelist: 'ALLOWED', last_updated: '2026-01-01T00:00:00Z' }, location_id: 'LOC1' };

  it('2001 for an unsupported command', () => ingress.given(cpoReceives, emspWithCallback, routed()).when(command('UNLOCK_EVERYTHING', start)).then(expectOcpi(200, 2001, /unsupported command/)));

  it('403 for credentials without an eMSP role', () =>
    ingress.given(cpoReceives).when(as(tokens.cpo, { method: 'POST', path: '/ocpi/2.2.1/commands/START_SESSION', body: start })).then(expectOcpi(403, 2000)));

  it('403 when the OCPI-from headers name a party the credentials do not hold', () =>
    ingress
      .given(cpoReceives, platform({ parties: [EMSP, { countryCode: 'DE', partyId: 'EMC', role: 'EMSP' }], token: tokens.emsp }), routed())
      .when(command('START_SESSION', start, { 'ocpi-from-country-code': 'FR', 'ocpi-from-party-id': 'XXX' }))
      .then(expectOcpi(403, 2000)));

  it('2001 for a response_url on a host the eMSP did not register', () =>
    ingress.given(cpoReceives, emspWithCallback, routed()).when(command('START_SESSION', { ...start, response_url: 'https://elsewhere.example/cb' })).then(expectOcpi(200, 2001, /not one this eMSP registered/)));

  it('REJECTED for an unknown location, without a forward or an event', () =>
    ingress
      .given(cpoReceives, emspWithCallback, routed())
      .when(command('START_SESSION', start))
      .then(expectOcpi(200, 1000), (res, hub) => {
        assert.equal((res.body?.data as { result?: string }).result, 'REJECTED');
        assert.equal(hub.realtime.calls.length, 0);
        assert.equal(hub.events.appended(topics.commands).length, 0);
      }));

  it('UNLOCK_CONNECTOR of a connector the location does not have is REJECTED, without a forward', () =>
    ingress
      .given(cpoReceives, emspWithCallback, routed(), storedLocations('LOC1'))
      .when(command('UNLOCK_CONNECTOR', { response_url: 'https://emb.example/ocpi/cb/2', location_id: 'LOC1', evse_uid: 'EVSE1', connector_id: '9' }))
      .then(expectOcpi(200, 1000), (res, hub) => {
        assert.deepEqual((res.body?.data as { message?: Array<{ text: string }> }).message?.[0]?.text, 'unknown connector');
        assert.equal(hub.realtime.calls.length, 0);
      }));

  it('forwards with response_url rewritten to the hub’s callback and returns the CPO’s answer', () =>
    ingress
      .given(cpoReceives, emspWithCallback, routed(), storedLocations('LOC1'), cpoAnswers({ result: 'ACCEPTED', timeout: 30 }))
      .when(command('START_SESSION', start))
      .then(expectOcpi(200, 1000), (res, hub) => {
        assert.deepEqual(res.body?.data, { result: 'ACCEPTED', timeout: 30 });
        const forwarded = hub.realtime.calls[0]?.body as { response_url?: string };
        assert.match(forwarded.response_url ?? '', /^http:\/\/hub\.test\/ocpi\/2\.2\.1\/commands\/callback\/[0-9a-f-]{36}$/);
        assert.equal(hub.events.appended(topics.commands).length, 2);
      }));
});

