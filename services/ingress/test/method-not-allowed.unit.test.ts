// Every known path answers a method it does not serve with 405, an OCPI envelope and an Allow header
// (RFC 9110 15.5.6); unknown paths are 404 (status_codes.asciidoc).
import { describe, it } from 'node:test';
import { expectHeader, expectOcpi } from '@hub/testing';
import { as, cpo, emsp, ingress, tokens } from './support/ingress-spec.ts';

describe('405 and Allow', () => {
  const cases: Array<[string, string, string, string]> = [
    ['DELETE', '/ocpi/2.2.1/locations/NL/CPA/LOC1', 'GET, PUT, PATCH, HEAD', tokens.cpo],
    ['POST', '/ocpi/2.2.1/locations', 'GET, HEAD', tokens.emsp],
    ['PATCH', '/ocpi/2.2.1/tariffs/NL/CPA/T1', 'GET, PUT, DELETE, HEAD', tokens.cpo],
    ['GET', '/ocpi/2.2.1/sessions/NL/CPA/S1', 'PUT, PATCH', tokens.cpo],
    ['PUT', '/ocpi/2.2.1/cdrs', 'POST', tokens.cpo],
    ['DELETE', '/ocpi/2.2.1/cdrs/NL/CPA/C1', 'GET, HEAD', tokens.cpo],
    ['GET', '/ocpi/2.2.1/commands/START_SESSION', 'POST', tokens.emsp],
    ['PUT', '/ocpi/2.2.1/hubclientinfo', 'GET, HEAD', tokens.emsp],
    ['POST', '/ocpi/versions', 'GET, HEAD', tokens.emsp],
    ['OPTIONS', '/ocpi/2.2.1', 'GET, HEAD', tokens.emsp],
    ['PATCH', '/ocpi/2.2.1/credentials', 'GET, POST, PUT, DELETE, HEAD', tokens.emsp],
  ];
  for (const [method, path, allow, token] of cases) {
    it(`${method} ${path}: 405, Allow: ${allow}`, () =>
      ingress.given(cpo(), emsp()).when(as(token, { method, path })).then(expectOcpi(405, 2000), expectHeader('Allow', allow)));
  }

  it('says why a location is not deleted', () =>
    ingress.given(cpo()).when(as(tokens.cpo, { method: 'DELETE', path: '/ocpi/2.2.1/locations/NL/CPA/LOC1' })).then(expectOcpi(405, 2000, /PATCH the EVSE status to REMOVED/)));

  it('answers 404 / 2000 to a path no module serves', () =>
    ingress.given(emsp()).when(as(tokens.emsp, { method: 'GET', path: '/ocpi/2.2.1/chargingprofiles' })).then(expectOcpi(404, 2000)));
});
