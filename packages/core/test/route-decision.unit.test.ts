// Where a record goes, decided from the facts the registry holds (src/routing.ts, routeDecision;
// interface document, Events, rule 2). The Postgres adapter reading the facts: test/store/routing-directory.int.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { routeDecision, type RouteFacts, type RouteRequest } from '../src/routing.ts';

const emsp = { countryCode: 'DE', partyId: 'EMS' };
const cpo = { countryCode: 'NL', partyId: 'CPO' };
const request: RouteRequest = { receiverRole: 'EMSP', module: 'sessions', emsp, cpo, fixedUrl: undefined, interfaceRole: 'RECEIVER' };
const facts: RouteFacts = { party: true, suspended: false, rule: true, sideSuspended: false, registered: true, sealed: Buffer.from('sealed'), overrideUrl: null, endpointUrl: 'https://emsp.example/sessions', version: '2.2.1' };

describe('routeDecision', () => {
  it('goes to the registered endpoint with the sealed token and the receiver version', () => {
    assert.deepEqual(routeDecision(facts, request), { ok: true, url: 'https://emsp.example/sessions', partnerTokenSealed: facts.sealed, version: '2.2.1' });
  });

  it('prefers a fixed URL, then the operator override, to the registered endpoint', () => {
    const overridden = routeDecision({ ...facts, overrideUrl: 'https://override.example' }, request);
    assert.equal(overridden.ok ? overridden.url : undefined, 'https://override.example');
    const fixed = routeDecision({ ...facts, overrideUrl: 'https://override.example' }, { ...request, fixedUrl: 'https://fixed.example' });
    assert.equal(fixed.ok ? fixed.url : undefined, 'https://fixed.example');
  });

  it('refuses, and says why, in the order the interface document names the conditions', () => {
    assert.deepEqual(routeDecision(undefined, request), { ok: false, reason: 'unknown eMSP DE/EMS' });
    assert.deepEqual(routeDecision({ ...facts, party: false }, request), { ok: false, reason: 'unknown eMSP DE/EMS' });
    assert.deepEqual(routeDecision({ ...facts, suspended: true }, request), { ok: false, reason: 'eMSP DE/EMS suspended' });
    assert.deepEqual(routeDecision({ ...facts, rule: false, sideSuspended: true }, request), { ok: false, reason: 'routing DE/EMS <- NL/CPO paused: a party of it is suspended' });
    assert.deepEqual(routeDecision({ ...facts, rule: false }, request), { ok: false, reason: 'no active routing rule DE/EMS <- NL/CPO' });
    assert.deepEqual(routeDecision({ ...facts, endpointUrl: null }, request), { ok: false, reason: 'no sessions receiver URL for the eMSP', noEndpoint: true });
    assert.deepEqual(routeDecision({ ...facts, registered: false }, { ...request, receiverRole: 'CPO' }), { ok: false, reason: 'CPO NL/CPO has no credentials registered' });
  });

  it('takes the canonical version when the stored one is not a version the hub speaks', () => {
    const target = routeDecision({ ...facts, version: null }, request);
    assert.equal(target.ok ? target.version : undefined, '2.2.1');
  });
});
