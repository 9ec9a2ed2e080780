// Authentication rules (interface document, Authentication; transport_and_format.asciidoc,
// Authorization header), in process on the in-memory ports.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hashCredentialsToken } from '@hub/ocpi';
import { expectOcpi, type InMemoryHub } from '@hub/testing';
import { as, cpo, emsp, ingress, platform, routed, tokens, CPO } from './support/ingress-spec.ts';

const list = { method: 'GET', path: '/ocpi/2.2.1/locations' };

describe('authentication', () => {
  it('answers 401 / 2000 without an Authorization header', () =>
    ingress.given(emsp()).when(list).then(expectOcpi(401, 2000, /Authorization header missing/)));

  it('answers 401 / 2000 to a header not of the form "Token <token>"', () =>
    ingress.given(emsp()).when({ ...list, headers: { authorization: `Bearer ${tokens.emsp}` } }).then(expectOcpi(401, 2000)));

  it('answers 401 / 2000 to an empty token', () =>
    ingress.given(emsp()).when({ ...list, headers: { authorization: 'Token ' } }).then(expectOcpi(401, 2000)));

  it('answers 401 / 2000 to an unknown token, Base64 or plain', async () => {
    await ingress.given(emsp()).when(as('not-a-token', list)).then(expectOcpi(401, 2000, /Unknown credentials token/));
    await ingress.given(emsp()).when({ ...list, headers: { authorization: 'Token not-a-token' } }).then(expectOcpi(401, 2000, /Unknown credentials token/));
  });

  it('admits the token Base64-encoded (OCPI 2.2.1)', () =>
    ingress.given(emsp(), routed()).when(as(tokens.emsp, list)).then(expectOcpi(200, 1000)));

  it('admits the token as is (older peers)', () =>
    ingress.given(emsp(), routed()).when({ ...list, headers: { authorization: `Token ${tokens.emsp}` } }).then(expectOcpi(200, 1000)));

  it('refuses a revoked token (the platform unregistered: credentials.asciidoc, DELETE)', () =>
    ingress
      .given(emsp({ token: 'first-hub-token' }), async (hub) => {
        const caller = await hub.callers.find(hashCredentialsToken('first-hub-token'));
        assert.ok(caller);
        await hub.registry.deleteCredentials(caller.platformId, []);
      })
      .when(as('first-hub-token', list))
      .then(expectOcpi(401, 2000)));

  it('lets the initial token call versions but nothing else (401 elsewhere)', async () => {
    const initial = platform({ parties: [CPO], token: 'initial-token', registered: false });
    await ingress.given(initial).when(as('initial-token', { method: 'GET', path: '/ocpi/versions' })).then(expectOcpi(200, 1000));
    await ingress.given(initial).when(as('initial-token', { method: 'GET', path: '/ocpi/2.2.1' })).then(expectOcpi(200, 1000));
    await ingress.given(initial).when(as('initial-token', list)).then(expectOcpi(401, 2000, /initial token/));
  });

  it('answers 403 to a platform whose every party is suspended; versions still answer', async () => {
    const suspended = (hub: InMemoryHub) => hub.registry.setSuspended(CPO, true, []);
    await ingress.given(cpo(), suspended).when(as(tokens.cpo, list)).then(expectOcpi(403, 2000, /suspended/));
    await ingress.given(cpo(), suspended).when(as(tokens.cpo, { method: 'GET', path: '/ocpi/versions' })).then(expectOcpi(200, 1000));
  });

  it('needs no token on the command callback (its id is the credential), and 404s an unknown id', () =>
    ingress
      .given()
      .when({ method: 'POST', path: '/ocpi/2.2.1/commands/callback/00000000-0000-4000-8000-000000000000', body: { result: 'ACCEPTED' } })
      .then(expectOcpi(404, 2000)));
});
