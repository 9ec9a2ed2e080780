// CPO-initiated real-time authorization (mod_tokens.asciidoc, Sender interface, POST; Real-time
// authorization): POST /tokens/{token_uid}/authorize[?type=] from a CPO, forwarded to the eMSP named
// by OCPI-to, else to the routed eMSP that pushed the token. In process on the in-memory ports with a
// scripted eMSP.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tokenEventTypes } from '@hub/events';
import { pathSubject, tokenObjectId } from '@hub/modules';
import type { PartyRole } from '@hub/ocpi';
import { expectHeader, expectOcpi, type Arrange, type InMemoryHub } from '@hub/testing';
import { as, BASE, CPO, cpo, EMSP, emsp, ingress, perMinute, platform, routed, tokens } from './support/ingress-spec.ts';

const EMC: PartyRole = { countryCode: 'DE', partyId: 'EMC', role: 'EMSP' };
const senderOf = (host: string) => [{ identifier: 'tokens', role: 'SENDER' as const, url: `https://${host}/ocpi/emsp/tokens/` }];
const emspSends = emsp({ endpoints: senderOf('emb.example') });
const otherEmspSends = platform({ parties: [EMC], token: tokens.other, endpoints: senderOf('emc.example') });

const authorize = (uid: string, options: { headers?: Record<string, string>; body?: unknown; query?: string; token?: string } = {}) =>
  as(options.token ?? tokens.cpo, { method: 'POST', path: `/ocpi/2.2.1/tokens/${uid}/authorize${options.query ?? ''}`, headers: options.headers ?? {}, ...(options.body !== undefined ? { body: options.body } : {}) });
const toEmsp = (p: PartyRole = EMSP) => ({ 'ocpi-to-country-code': p.countryCode, 'ocpi-to-party-id': p.partyId });

let offset = 0;
/** Given tokens an eMSP pushed, as the projector leaves them in the tokens read model. */
const storedToken = (owner: PartyRole, uid: string, type = 'RFID'): Arrange<InMemoryHub> => async (hub) => {
  const data = { country_code: owner.countryCode, party_id: owner.partyId, uid, type, contract_id: 'C1', issuer: 'x', valid: true, whitelist: 'NEVER', last_updated: '2026-01-01T00:00:00Z' };
  const subject = pathSubject({ countryCode: owner.countryCode, partyId: owner.partyId, id: tokenObjectId(uid, type) });
  await hub.readModels.applyBatch('tokens', 9, [{ offset: String(offset++), type: tokenEventTypes.tokenPut, subject, data, time: '2026-01-01T00:00:00Z' }]);
};
const emspAnswers = (httpStatus: number, envelope: Record<string, unknown>): Arrange<InMemoryHub> => (hub) => hub.realtime.answerWith(() => ({ httpStatus, envelope }));
const allowed = { allowed: 'ALLOWED', token: { uid: 'TOKEN1', type: 'RFID' }, authorization_reference: 'ref-1' };
const nothingForwarded = (_res: unknown, hub: InMemoryHub) => assert.equal(hub.realtime.calls.length, 0);

describe('CPO-initiated token authorization: who asks', () => {
  it("a CPO finds it in the hub's version details: the tokens SENDER endpoint (beside the eMSPs' RECEIVER one)", () =>
    ingress
      .given(cpo())
      .when(as(tokens.cpo, { method: 'GET', path: '/ocpi/2.2.1' }))
      .then(expectOcpi(200, 1000), (res) => {
        const endpoints = (res.body?.data as { endpoints: Array<{ identifier: string; role: string; url: string }> }).endpoints.filter((e) => e.identifier === 'tokens');
        assert.deepEqual(endpoints.map((e) => [e.role, e.url]).sort(), [['RECEIVER', `${BASE}/ocpi/2.2.1/tokens`], ['SENDER', `${BASE}/ocpi/2.2.1/tokens`]]);
      }));

  it('403 for credentials without a CPO role', () =>
    ingress.given(cpo(), emspSends, routed(), storedToken(EMSP, 'TOKEN1')).when(authorize('TOKEN1', { token: tokens.emsp })).then(expectOcpi(403, 2000), nothingForwarded));

  it('403 when OCPI-from names a CPO the credentials do not hold', () =>
    ingress
      .given(cpo(), emspSends, routed(), storedToken(EMSP, 'TOKEN1'))
      .when(authorize('TOKEN1', { headers: { 'ocpi-from-country-code': 'FR', 'ocpi-from-party-id': 'XXX' } }))
      .then(expectOcpi(403, 2000, /CPO role/), nothingForwarded));

  it('with several CPO parties, OCPI-from picks the one that asks (and whose routes count)', () => {
    const second: PartyRole = { countryCode: 'NL', partyId: 'CPB', role: 'CPO' };
    return ingress
      .given(platform({ parties: [CPO, second], token: tokens.cpo }), emspSends, routed(EMSP, second), storedToken(EMSP, 'TOKEN1'), emspAnswers(200, { status_code: 1000, data: allowed }))
      .when(authorize('TOKEN1', { headers: { 'ocpi-from-country-code': 'NL', 'ocpi-from-party-id': 'CPB' } }))
      .then(expectOcpi(200, 1000), (_res, hub) => assert.equal(hub.realtime.calls[0]?.headers['ocpi-from-party-id'], 'CPB'));
  });

  it('2001 for a TokenType OCPI does not define', () =>
    ingress.given(cpo(), emspSends, routed(), storedToken(EMSP, 'TOKEN1')).when(authorize('TOKEN1', { query: '?type=BADGE' })).then(expectOcpi(200, 2001, /type must be one of/), nothingForwarded));

  it(`429 with Retry-After once the CPO spent its ${perMinute.authorizations} a minute (its own bucket: tokens-authorize-cpo)`, async () => {
    const spent: Arrange<InMemoryHub> = async (hub) => {
      for (let i = 0; i < perMinute.authorizations; i++) await hub.rateLimiter.hit('tokens-authorize-cpo', 'NL/CPA', Number.MAX_SAFE_INTEGER);
    };
    await ingress.given(cpo(), emspSends, routed(), storedToken(EMSP, 'TOKEN1'), spent).when(authorize('TOKEN1')).then(expectOcpi(429, 2000, /authorizations per minute/), expectHeader('Retry-After', /^\d+$/), nothingForwarded);
    // The eMSP-initiated direction's bucket of the same party id does not count here.
    const otherBucket: Arrange<InMemoryHub> = async (hub) => {
      for (let i = 0; i < perMinute.authorizations; i++) await hub.rateLimiter.hit('tokens-authorize', 'NL/CPA', Number.MAX_SAFE_INTEGER);
    };
    await ingress.given(cpo(), emspSends, routed(), storedToken(EMSP, 'TOKEN1'), otherBucket, emspAnswers(200, { status_code: 1000, data: allowed })).when(authorize('TOKEN1')).then(expectOcpi(200, 1000));
  });
});

describe('CPO-initiated token authorization: which eMSP', () => {
  it('the routed eMSP that pushed the token: POST to its tokens SENDER endpoint, the answer passed back unchanged', () =>
    ingress
      .given(cpo(), emspSends, routed(), storedToken(EMSP, 'TOKEN1'), emspAnswers(200, { status_code: 1000, data: allowed }))
      .when(authorize('TOKEN1', { body: { location_id: 'LOC1', evse_uids: ['E1'] } }))
      .then(expectOcpi(200, 1000), (res, hub) => {
        assert.deepEqual(res.body?.data, allowed);
        const forwarded = hub.realtime.calls[0];
        assert.equal(forwarded?.method, 'POST');
        assert.equal(forwarded?.url, 'https://emb.example/ocpi/emsp/tokens/TOKEN1/authorize');
        assert.deepEqual(forwarded?.body, { location_id: 'LOC1', evse_uids: ['E1'] });
        assert.deepEqual(forwarded?.headers, { 'ocpi-from-country-code': 'NL', 'ocpi-from-party-id': 'CPA', 'ocpi-to-country-code': 'DE', 'ocpi-to-party-id': 'EMB' });
      }));

  it('?type= picks the token of that type and is forwarded', () =>
    ingress
      .given(cpo(), emspSends, routed(), storedToken(EMSP, 'APP1', 'APP_USER'), emspAnswers(200, { status_code: 1000, data: allowed }))
      .when(authorize('APP1', { query: '?type=APP_USER' }))
      .then(expectOcpi(200, 1000), (_res, hub) => assert.equal(hub.realtime.calls[0]?.url, 'https://emb.example/ocpi/emsp/tokens/APP1/authorize?type=APP_USER')));

  it('404 with 2004 and no data when no routed eMSP pushed the token (of that type)', async () => {
    const unknown = expectOcpi<InMemoryHub>(404, 2004);
    const noData = (res: { body?: Record<string, unknown> | undefined }) => assert.equal(res.body && 'data' in res.body, false);
    await ingress.given(cpo(), emspSends, routed()).when(authorize('TOKEN1')).then(unknown, noData, nothingForwarded);
    await ingress.given(cpo(), emspSends, routed(), storedToken(EMSP, 'TOKEN1', 'APP_USER')).when(authorize('TOKEN1')).then(unknown, nothingForwarded);
    await ingress.given(cpo(), emspSends, storedToken(EMSP, 'TOKEN1')).when(authorize('TOKEN1')).then(unknown, nothingForwarded);
  });

  it('2002 when two routed eMSPs pushed the token: the CPO names one in the OCPI-to headers', async () => {
    const both = [cpo(), emspSends, otherEmspSends, routed(), routed(EMC), storedToken(EMSP, 'TOKEN1'), storedToken(EMC, 'token1')];
    await ingress.given(...both).when(authorize('TOKEN1')).then(expectOcpi(200, 2002, /OCPI-to/), nothingForwarded);
    await ingress
      .given(...both, emspAnswers(200, { status_code: 1000, data: allowed }))
      .when(authorize('TOKEN1', { headers: toEmsp(EMC) }))
      .then(expectOcpi(200, 1000), (_res, hub) => assert.equal(hub.realtime.calls[0]?.url, 'https://emc.example/ocpi/emsp/tokens/TOKEN1/authorize'));
  });

  it('OCPI-to reaches an eMSP that never pushed the token (real-time only)', () =>
    ingress
      .given(cpo(), emspSends, routed(), emspAnswers(200, { status_code: 1000, data: allowed }))
      .when(authorize('TOKEN9', { headers: toEmsp() }))
      .then(expectOcpi(200, 1000), (_res, hub) => assert.equal(hub.realtime.calls[0]?.headers['ocpi-to-party-id'], 'EMB')));

  it('4001 when the named eMSP is not routed, or registered no tokens SENDER endpoint', async () => {
    await ingress.given(cpo(), emspSends).when(authorize('TOKEN1', { headers: toEmsp() })).then(expectOcpi(200, 4001, /no active routing rule/), nothingForwarded);
    const receiverOnly = emsp({ endpoints: [{ identifier: 'tokens', role: 'RECEIVER', url: 'https://emb.example/ocpi/receiver/tokens' }] });
    await ingress.given(cpo(), receiverOnly, routed()).when(authorize('TOKEN1', { headers: toEmsp() })).then(expectOcpi(200, 4001, /no tokens sender URL for the eMSP/), nothingForwarded);
  });
});

describe("CPO-initiated token authorization: the eMSP's answer", () => {
  const given = [cpo(), emspSends, routed(), storedToken(EMSP, 'TOKEN1')];
  const unknownData = (res: { body?: Record<string, unknown> | undefined }) => assert.deepEqual(res.body?.['data'], { allowed: 'UNKNOWN' });

  it('an eMSP that does not know the token (HTTP 404) gives the CPO 2004', () =>
    ingress.given(...given, emspAnswers(404, { status_code: 2004, status_message: 'Unknown Token' })).when(authorize('TOKEN1')).then(expectOcpi(404, 2004)));

  it('a 404 without an OCPI answer (a wrong eMSP URL) is 4000 with allowed UNKNOWN, not an unknown token', () =>
    ingress.given(...given, emspAnswers(404, { error: 'Not Found' })).when(authorize('TOKEN1')).then(expectOcpi(200, 4000), unknownData));

  it("the eMSP's other OCPI errors are passed on with allowed UNKNOWN", () =>
    ingress.given(...given, emspAnswers(200, { status_code: 2002, status_message: 'need a location' })).when(authorize('TOKEN1')).then(expectOcpi(200, 2002, /need a location/), unknownData));

  it('unreachable: 4003, garbage: 4000, each with allowed UNKNOWN', async () => {
    await ingress.given(...given).when(authorize('TOKEN1')).then(expectOcpi(200, 4003), unknownData);
    await ingress.given(...given, emspAnswers(200, { status_code: 1000, data: { allowed: 'MAYBE' } })).when(authorize('TOKEN1')).then(expectOcpi(200, 4000), unknownData);
  });
});
