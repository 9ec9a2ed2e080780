// The credentials module's refusals (credentials.asciidoc; interface document, Credentials), in
// process on the in-memory ports with a partner that cannot be reached.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hashCredentialsToken } from '@hub/ocpi';
import { expectOcpi } from '@hub/testing';
import { as, cpo, CPO, ingress, platform, tokens } from './support/ingress-spec.ts';

const credentials = (token = 'partner-token') => ({
  token,
  url: 'https://cpa.example/ocpi/versions',
  roles: [{ role: 'CPO', country_code: CPO.countryCode, party_id: CPO.partyId, business_details: { name: 'CPA' } }],
});
const initial = platform({ parties: [CPO], token: 'initial-token', registered: false });

describe('credentials', () => {
  it('GET answers the hub’s credentials with the token the caller presented', () =>
    ingress
      .given(cpo())
      .when(as(tokens.cpo, { method: 'GET', path: '/ocpi/2.2.1/credentials' }))
      .then(expectOcpi(200, 1000), (res) => assert.equal((res.body?.data as { token?: string }).token, tokens.cpo)));

  it('POST by a registered platform is 405 (use PUT); PUT before registering is 405 (use POST)', async () => {
    await ingress.given(cpo()).when(as(tokens.cpo, { method: 'POST', path: '/ocpi/2.2.1/credentials', body: credentials() })).then(expectOcpi(405, 2000, /use PUT/));
    await ingress.given(initial).when(as('initial-token', { method: 'PUT', path: '/ocpi/2.2.1/credentials', body: credentials() })).then(expectOcpi(405, 2000, /use POST/));
  });

  it('2001 for a body that breaks the Credentials schema', () =>
    ingress.given(initial).when(as('initial-token', { method: 'POST', path: '/ocpi/2.2.1/credentials', body: { token: 'x' } })).then(expectOcpi(200, 2001)));

  it('3001 when the partner’s versions cannot be fetched; the initial token still works', () =>
    ingress
      .given(initial)
      .when(as('initial-token', { method: 'POST', path: '/ocpi/2.2.1/credentials', body: credentials() }))
      .then(expectOcpi(200, 3001), async (_res, hub) => assert.equal((await hub.callers.find(hashCredentialsToken('initial-token')))?.tokenKind, 'INITIAL')));
});
