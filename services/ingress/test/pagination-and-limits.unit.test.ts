// Pagination (transport_and_format.asciidoc, Pagination; interface document, Pagination) and rate
// limits (interface document, Limits), in process on the in-memory ports. The test ingress pages by 2
// (default) up to 3 (maximum) and allows 5 requests a minute per limited scope.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expectHeader, expectOcpi, type Arrange, type InMemoryHub } from '@hub/testing';
import { as, BASE, cpo, emsp, ingress, perMinute, platform, routed, tokens } from './support/ingress-spec.ts';
import { storedLocations } from './support/objects.ts';

const list = (query = '') => as(tokens.emsp, { method: 'GET', path: `/ocpi/2.2.1/locations${query}` });
const ids = (body: unknown): string[] => ((body as { data: Array<{ id: string }> }).data ?? []).map((l) => l.id);
const five = storedLocations('L1', 'L2', 'L3', 'L4', 'L5');
const spent = (scope: string, party: string, n: number): Arrange<InMemoryHub> => async (hub) => {
  for (let i = 0; i < n; i++) await hub.rateLimiter.hit(scope, party, Number.MAX_SAFE_INTEGER);
};

describe('pagination headers', () => {
  it('the first page: default limit, X-Total-Count, X-Limit (the limit applied: the default) and a Link to the next page', () =>
    ingress
      .given(cpo(), emsp(), routed(), five)
      .when(list())
      .then(
        expectOcpi(200, 1000),
        (res) => assert.deepEqual(ids(res.body), ['L1', 'L2']),
        expectHeader('X-Total-Count', '5'),
        expectHeader('X-Limit', '2'),
        expectHeader('Link', `<${BASE}/ocpi/2.2.1/locations?offset=2&limit=2>; rel="next"`),
      ));

  it('a limit above the maximum is capped to it; the Link keeps the filters', () =>
    ingress
      .given(cpo(), emsp(), routed(), five)
      .when(list('?limit=50&date_from=2020-01-01T00:00:00Z'))
      .then(
        (res) => assert.deepEqual(ids(res.body), ['L1', 'L2', 'L3']),
        expectHeader('X-Limit', '3'),
        expectHeader('Link', `<${BASE}/ocpi/2.2.1/locations?offset=3&limit=3&date_from=2020-01-01T00%3A00%3A00.000Z>; rel="next"`),
      ));

  it('a limit below the maximum is the X-Limit of its answer', () =>
    ingress.given(cpo(), emsp(), routed(), five).when(list('?limit=1')).then((res) => assert.deepEqual(ids(res.body), ['L1']), expectHeader('X-Limit', '1')));

  it('the last page has no Link; an offset past the end is an empty page with the total', async () => {
    await ingress.given(cpo(), emsp(), routed(), five).when(list('?offset=3&limit=3')).then((res) => assert.deepEqual(ids(res.body), ['L4', 'L5']), expectHeader('Link', undefined));
    await ingress.given(cpo(), emsp(), routed(), five).when(list('?offset=10')).then(expectOcpi(200, 1000), (res) => assert.deepEqual(ids(res.body), []), expectHeader('X-Total-Count', '5'), expectHeader('Link', undefined));
  });

  it('date_to is exclusive and filters by last_updated', () =>
    ingress.given(cpo(), emsp(), routed(), five).when(list('?date_to=2026-01-01T10:00:00Z')).then(expectOcpi(200, 1000), expectHeader('X-Total-Count', '0')));

  it('2001 for a negative, fractional, repeated or non-numeric offset or limit, or a bad date', async () => {
    for (const query of ['?offset=-1', '?limit=1.5', '?offset=a', '?offset=1&offset=2', '?date_from=yesterday', '?date_to=2026-02-30T00:00:00Z']) {
      await ingress.given(cpo(), emsp(), routed()).when(list(query)).then(expectOcpi(200, 2001));
    }
  });

  it('an eMSP sees only the CPOs it has an active routing rule with', () =>
    ingress
      .given(cpo(), emsp(), five)
      .when(list())
      .then(expectOcpi(200, 1000), (res) => assert.deepEqual(ids(res.body), []), expectHeader('X-Total-Count', '0')));

  it('hubclientinfo is paginated the same way', () =>
    ingress
      .given(cpo(), emsp(), routed(), platform({ parties: [{ countryCode: 'DE', partyId: 'EMC', role: 'EMSP' }, { countryCode: 'DE', partyId: 'EMD', role: 'EMSP' }], token: tokens.other }))
      .when(as(tokens.other, { method: 'GET', path: '/ocpi/2.2.1/hubclientinfo?limit=1' }))
      .then(expectOcpi(200, 1000), expectHeader('X-Total-Count', '2'), expectHeader('Link', `<${BASE}/ocpi/2.2.1/hubclientinfo?offset=1&limit=1>; rel="next"`)));
});

describe('rate limits', () => {
  it(`location lists: the ${perMinute.locationLists + 1}th in a minute is 429 with Retry-After, per eMSP party`, async () => {
    await ingress.given(cpo(), emsp(), routed(), spent('locations-list', 'DE/EMB', perMinute.locationLists - 1)).when(list()).then(expectOcpi(200, 1000));
    await ingress
      .given(cpo(), emsp(), routed(), spent('locations-list', 'DE/EMB', perMinute.locationLists))
      .when(list())
      .then(expectOcpi(429, 2000, /at most 5 location list requests per minute/), expectHeader('Retry-After', /^([1-9]|[1-5][0-9]|60)$/));
    // Another party's budget is its own.
    await ingress.given(cpo(), emsp(), routed(), spent('locations-list', 'DE/XXX', perMinute.locationLists)).when(list()).then(expectOcpi(200, 1000));
  });

  it('token authorizations: 429 with Retry-After once the eMSP spent its minute', () =>
    ingress
      .given(cpo(), emsp(), routed(), spent('tokens-authorize', 'DE/EMB', perMinute.authorizations))
      .when(as(tokens.emsp, { method: 'PUT', path: '/ocpi/2.2.1/tokens/DE/EMB/TOKEN1/authorize', headers: { 'ocpi-to-country-code': 'NL', 'ocpi-to-party-id': 'CPA' } }))
      .then(expectOcpi(429, 2000, /authorizations per minute/), expectHeader('Retry-After', /^\d+$/)));

  it('commands: 429 with Retry-After once the eMSP spent its minute', () =>
    ingress
      .given(cpo(), emsp(), routed(), spent('commands', 'DE/EMB', perMinute.commands))
      .when(as(tokens.emsp, { method: 'POST', path: '/ocpi/2.2.1/commands/STOP_SESSION', body: { response_url: 'https://emb.example/cb', session_id: 'S1' } }))
      .then(expectOcpi(429, 2000, /commands per minute/), expectHeader('Retry-After', /^\d+$/)));
});

