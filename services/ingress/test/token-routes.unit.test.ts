// Token push and pull rules (mod_tokens.asciidoc, Receiver and Sender interfaces;
// transport_and_format.asciidoc, Message Routing), in process on the in-memory ports: the eMSP pushes
// its tokens to the hub, routed CPOs pull them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tokenEventTypes, topics } from '@hub/events';
import { objectKey, pathSubject, tokenObjectId } from '@hub/modules';
import { expectHeader, expectOcpi, type Arrange, type Expectation, type InMemoryHub } from '@hub/testing';
import type { Token } from '@hub/schemas/generated/ocpi/token';
import { as, cpo, emsp, EMSP, ingress, perMinute, platform, routed, tokens } from './support/ingress-spec.ts';

const token = (uid: string, type: Token['type'] = 'RFID', extra: Partial<Token> = {}): Token => ({
  country_code: EMSP.countryCode,
  party_id: EMSP.partyId,
  uid,
  type,
  contract_id: `DE-EMB-${uid}`,
  issuer: 'EMB',
  valid: true,
  whitelist: 'ALLOWED',
  last_updated: '2026-01-01T10:00:00Z',
  ...extra,
});

let offset = 0;
/** Given tokens of the test eMSP in the read model, as the projector leaves them after their PUTs. */
const storedTokens = (...stored: Token[]): Arrange<InMemoryHub> => async (hub) => {
  const records = stored.map((t, i) => {
    const path = { countryCode: t.country_code, partyId: t.party_id, id: tokenObjectId(t.uid, t.type) };
    return { offset: String(offset++), type: tokenEventTypes.tokenPut, subject: pathSubject(path), data: t as unknown as Record<string, unknown>, time: `2026-01-01T10:00:0${i % 10}Z` };
  });
  await hub.readModels.applyBatch('tokens', 9, records);
};

const V = '/ocpi/2.2.1/tokens';
const put = (path: string, body: unknown, headers: Record<string, string> = {}) => as(tokens.emsp, { method: 'PUT', path: `${V}/${path}`, body, headers });
const patch = (path: string, body: unknown, headers: Record<string, string> = {}) => as(tokens.emsp, { method: 'PATCH', path: `${V}/${path}`, body, headers });
const appended = (n: number): Expectation<InMemoryHub> => (_res, hub) => assert.equal(hub.events.appended(topics.tokens).length, n, 'token events appended');
const cpoReceives = cpo({ endpoints: [{ identifier: 'tokens', role: 'RECEIVER', url: 'https://cpa.example/ocpi/tokens' }] });
const toCpo = { 'ocpi-to-country-code': 'NL', 'ocpi-to-party-id': 'CPA' };
const uids = (body: unknown): string[] => ((body as { data?: Token[] }).data ?? []).map((t) => `${t.uid}|${t.type}`);

describe('token pushes by the eMSP', () => {
  it('a PUT of the caller’s own token is one tokenPut event, keyed by uid and type, from the eMSP, to every routed CPO', () =>
    ingress
      .given(emsp())
      .when(put('DE/EMB/TOKEN1', token('TOKEN1')))
      .then(expectOcpi(200, 1000), appended(1), (_res, hub) => {
        const [event] = hub.events.appended(topics.tokens);
        const path = { countryCode: 'DE', partyId: 'EMB', id: 'TOKEN1|RFID' };
        assert.equal(event?.type, tokenEventTypes.tokenPut);
        assert.equal(event?.subject, pathSubject(path));
        assert.equal(event?.key, objectKey(path));
        assert.equal(event?.from, 'DE/EMB');
        assert.equal(event?.to, undefined, 'no OCPI-to: no single recipient');
        assert.deepEqual(event?.data, token('TOKEN1'));
      }));

  it('?type= names the token type: a uid is unique per type only', () =>
    ingress
      .given(emsp())
      .when(put('DE/EMB/TOKEN1?type=APP_USER', token('TOKEN1', 'APP_USER')))
      .then(expectOcpi(200, 1000), (_res, hub) => assert.equal(hub.events.appended(topics.tokens)[0]?.subject, 'DE/EMB/TOKEN1%7CAPP_USER')));

  it('403 for a token of a party the credentials do not act as eMSP for; nothing appended', async () => {
    await ingress.given(emsp()).when(put('DE/XYZ/TOKEN1', token('TOKEN1', 'RFID', { party_id: 'XYZ' }))).then(expectOcpi(403, 2000, /do not act as eMSP DE\/XYZ/), appended(0));
    // A CPO role does not own tokens, even under its own country_code/party_id.
    const cpoToken = token('TOKEN1', 'RFID', { country_code: 'NL', party_id: 'CPA' });
    await ingress.given(cpo()).when(as(tokens.cpo, { method: 'PUT', path: `${V}/NL/CPA/TOKEN1`, body: cpoToken })).then(expectOcpi(403, 2000), appended(0));
    // A suspended eMSP party pushes nothing.
    await ingress.given(emsp(), (hub) => hub.registry.setSuspended(EMSP, true, [])).when(put('DE/EMB/TOKEN1', token('TOKEN1'))).then(expectOcpi(403, 2000));
  });

  it('2001 when the body’s ids or type differ from the path and ?type= (RFID when omitted); uids compare case-insensitively', async () => {
    await ingress.given(emsp()).when(put('DE/EMB/TOKEN1', token('TOKEN2'))).then(expectOcpi(200, 2001, /uid in the body \("TOKEN2"\) differs/), appended(0));
    await ingress.given(emsp()).when(put('DE/EMB/TOKEN1', token('TOKEN1', 'RFID', { party_id: 'EMX' }))).then(expectOcpi(200, 2001, /party_id in the body/));
    await ingress.given(emsp()).when(put('DE/EMB/TOKEN1', token('TOKEN1', 'APP_USER'))).then(expectOcpi(200, 2001, /type in the body \("APP_USER"\) differs from the path \("RFID"\)/));
    await ingress.given(emsp()).when(put('DE/EMB/TOKEN1?type=APP_USER', token('TOKEN1'))).then(expectOcpi(200, 2001, /type in the body/));
    await ingress.given(emsp()).when(put('de/emb/token1', token('TOKEN1'))).then(expectOcpi(200, 1000));
  });

  it('2001 for a body that breaks the schema, an unknown ?type= and a type given twice', async () => {
    await ingress.given(emsp()).when(put('DE/EMB/TOKEN1', { ...token('TOKEN1'), whitelist: 'SOMETIMES' })).then(expectOcpi(200, 2001, /whitelist/), appended(0));
    await ingress.given(emsp()).when(put('DE/EMB/TOKEN1?type=BADGE', token('TOKEN1'))).then(expectOcpi(200, 2001, /type must be one of/));
    await ingress.given(emsp()).when(put('DE/EMB/TOKEN1?type=RFID&type=RFID', token('TOKEN1'))).then(expectOcpi(200, 2001, /type must be one of/));
  });

  it('OCPI-to naming a routed CPO makes it the one recipient; naming the hub is a Broadcast Push', async () => {
    await ingress
      .given(emsp(), cpoReceives, routed())
      .when(put('DE/EMB/TOKEN1', token('TOKEN1'), toCpo))
      .then(expectOcpi(200, 1000), (_res, hub) => assert.equal(hub.events.appended(topics.tokens)[0]?.to, 'NL/CPA'));
    await ingress
      .given(emsp(), cpoReceives, routed())
      .when(put('DE/EMB/TOKEN1', token('TOKEN1'), { 'ocpi-to-country-code': 'nl', 'ocpi-to-party-id': 'hub' }))
      // Kept as the hub's party: the dispatcher sends a broadcast with the hub's OCPI-from.
      .then(expectOcpi(200, 1000), appended(1), (_res, hub) => assert.equal(hub.events.appended(topics.tokens)[0]?.to, 'NL/HUB'));
  });

  it('4001 when OCPI-to names a CPO without an active routing rule to the eMSP, or no party at all; nothing appended', async () => {
    await ingress.given(emsp(), cpoReceives).when(put('DE/EMB/TOKEN1', token('TOKEN1'), toCpo)).then(expectOcpi(200, 4001, /no active routing rule/), appended(0));
    await ingress.given(emsp()).when(put('DE/EMB/TOKEN1', token('TOKEN1'), { 'ocpi-to-country-code': 'FR', 'ocpi-to-party-id': 'NOP' })).then(expectOcpi(200, 4001, /unknown CPO FR\/NOP/), appended(0));
    await ingress.given(emsp(), cpoReceives, routed()).when(put('DE/EMB/TOKEN1', token('TOKEN1'), { 'ocpi-to-party-id': 'CPA' })).then(expectOcpi(200, 2001, /go together/), appended(0));
  });

  it('a PATCH of a token the hub holds is one tokenPatched event; of an unknown one (or another type) 404 / 2000', async () => {
    const valid = { valid: false, last_updated: '2026-01-02T00:00:00Z' };
    await ingress
      .given(emsp(), storedTokens(token('TOKEN1')))
      .when(patch('DE/EMB/token1', valid))
      .then(expectOcpi(200, 1000), (_res, hub) => {
        const [event] = hub.events.appended(topics.tokens);
        assert.equal(event?.type, tokenEventTypes.tokenPatched);
        assert.deepEqual(event?.data, valid);
      });
    await ingress.given(emsp()).when(patch('DE/EMB/NOPE', valid)).then(expectOcpi(404, 2000, /unknown token DE\/EMB\/NOPE%7CRFID/), appended(0));
    await ingress.given(emsp(), storedTokens(token('TOKEN1'))).when(patch('DE/EMB/TOKEN1?type=APP_USER', valid)).then(expectOcpi(404, 2000), appended(0));
  });

  it('2001 for a PATCH without last_updated or with a uid other than the path’s', async () => {
    await ingress.given(emsp(), storedTokens(token('TOKEN1'))).when(patch('DE/EMB/TOKEN1', { valid: false })).then(expectOcpi(200, 2001, /last_updated/), appended(0));
    await ingress.given(emsp(), storedTokens(token('TOKEN1'))).when(patch('DE/EMB/TOKEN1', { uid: 'TOKEN2', last_updated: '2026-01-02T00:00:00Z' })).then(expectOcpi(200, 2001, /uid in the body/));
  });

  it('405 with Allow for DELETE and other methods; the authorize route is still served', async () => {
    await ingress.given(emsp()).when(as(tokens.emsp, { method: 'DELETE', path: `${V}/DE/EMB/TOKEN1` })).then(expectOcpi(405, 2000, /valid false/), expectHeader('Allow', 'GET, PUT, PATCH, HEAD'));
    await ingress.given(emsp()).when(as(tokens.emsp, { method: 'POST', path: `${V}/DE/EMB/TOKEN1` })).then(expectOcpi(405, 2000), expectHeader('Allow', 'GET, PUT, PATCH, HEAD'));
    await ingress.given(emsp()).when(as(tokens.emsp, { method: 'DELETE', path: V })).then(expectOcpi(405, 2000), expectHeader('Allow', 'GET, HEAD'));
    await ingress.given(emsp()).when(as(tokens.emsp, { method: 'PUT', path: `${V}/DE/EMB/TOKEN1/authorize`, headers: toCpo })).then(expectOcpi(200, 4001, /unknown CPO NL\/CPA/));
  });
});

describe('token pulls', () => {
  const three = storedTokens(token('T1'), token('T1', 'APP_USER'), token('T2'));
  const list = (query = '', who: string = tokens.cpo) => as(who, { method: 'GET', path: `${V}${query}` });

  it('a CPO routed to the eMSP pulls its tokens page by page, with the pagination headers', () =>
    ingress
      .given(emsp(), cpo(), routed(), three)
      .when(list())
      .then(expectOcpi(200, 1000), (res) => assert.deepEqual(uids(res.body), ['T1|RFID', 'T1|APP_USER']), expectHeader('X-Total-Count', '3'), expectHeader('X-Limit', '2'), expectHeader('Link', /offset=2&limit=2>; rel="next"/)));

  it('a CPO without a routing rule to the eMSP, and the eMSP itself, list none', async () => {
    await ingress.given(emsp(), cpo(), three).when(list()).then(expectOcpi(200, 1000), (res) => assert.deepEqual(uids(res.body), []), expectHeader('X-Total-Count', '0'));
    await ingress.given(emsp(), cpo(), routed(), three).when(list('', tokens.emsp)).then((res) => assert.deepEqual(uids(res.body), []));
  });

  it('token lists have their own budget per CPO party: 429 with Retry-After past it', () =>
    ingress
      .given(emsp(), cpo(), routed(), async (hub) => {
        for (let i = 0; i < perMinute.tokenLists; i++) await hub.rateLimiter.hit('tokens-list', 'NL/CPA', Number.MAX_SAFE_INTEGER);
      })
      .when(list())
      .then(expectOcpi(429, 2000, /at most 5 token list requests per minute/), expectHeader('Retry-After', /^\d+$/)));

  it('the owning eMSP and routed CPOs get one token by uid and ?type=; others 404 / 2000', async () => {
    const get = (path: string, who: string = tokens.emsp) => as(who, { method: 'GET', path: `${V}/${path}` });
    const type = (res: { body?: { data?: unknown } }) => (res.body?.data as Token).type;
    await ingress.given(emsp(), three).when(get('DE/EMB/T1?type=APP_USER')).then(expectOcpi(200, 1000), (res) => assert.equal(type(res), 'APP_USER'));
    await ingress.given(emsp(), three).when(get('DE/EMB/t1')).then(expectOcpi(200, 1000), (res) => assert.equal(type(res), 'RFID'));
    await ingress.given(emsp(), three).when(get('DE/EMB/T2?type=APP_USER')).then(expectOcpi(404, 2000));
    await ingress.given(emsp(), cpo(), routed(), three).when(get('DE/EMB/T2', tokens.cpo)).then(expectOcpi(200, 1000));
    await ingress.given(emsp(), cpo(), three).when(get('DE/EMB/T2', tokens.cpo)).then(expectOcpi(404, 2000));
    const other = platform({ parties: [{ countryCode: 'FR', partyId: 'EMO', role: 'EMSP' }], token: tokens.other });
    await ingress.given(emsp(), other, three).when(get('DE/EMB/T2', tokens.other)).then(expectOcpi(404, 2000));
  });
});

describe('version details', () => {
  it('list tokens as SENDER (CPOs pull) and RECEIVER (eMSPs push), hubclientinfo as SENDER, commands as RECEIVER', () =>
    ingress.given(emsp()).when(as(tokens.emsp, { method: 'GET', path: '/ocpi/2.2.1' })).then(expectOcpi(200, 1000), (res) => {
      const endpoints = (res.body?.data as { endpoints: Array<{ identifier: string; role: string }> }).endpoints;
      const roles = (id: string) => endpoints.filter((e) => e.identifier === id).map((e) => e.role).sort();
      assert.deepEqual(roles('tokens'), ['RECEIVER', 'SENDER']);
      assert.deepEqual(roles('hubclientinfo'), ['SENDER']);
      assert.deepEqual(roles('commands'), ['RECEIVER']);
    }));
});
