// A sandbox hub says so on every answer (docs/reference/sandbox.md, Which hub am I talking to); a
// production hub's answers carry no such header.
import { describe, it } from 'node:test';
import { apiSpec, expectHeader, expectOcpi, inMemoryHub } from '@hub/testing';
import { as, cpo, ingressOn, tokens } from './support/ingress-spec.ts';

const sandboxHub = apiSpec(() => {
  const hub = inMemoryHub();
  return { world: hub, handler: ingressOn(hub, { sandbox: true }) };
});
const productionHub = apiSpec(() => {
  const hub = inMemoryHub();
  return { world: hub, handler: ingressOn(hub) };
});

describe('X-Hub-Environment', () => {
  it('a sandbox hub marks its answers, refusals included', async () => {
    await sandboxHub.given(cpo()).when(as(tokens.cpo, { method: 'GET', path: '/ocpi/versions' })).then(expectOcpi(200, 1000), expectHeader('x-hub-environment', 'sandbox'));
    await sandboxHub.given(cpo()).when(as('no-such-token', { method: 'GET', path: '/ocpi/versions' })).then(expectOcpi(401, 2000), expectHeader('x-hub-environment', 'sandbox'));
    await sandboxHub.given(cpo()).when(as(tokens.cpo, { method: 'GET', path: '/ocpi/2.2.1/nothing-here' })).then(expectHeader('x-hub-environment', 'sandbox'));
  });

  it('a production hub sends no such header', async () => {
    await productionHub.given(cpo()).when(as(tokens.cpo, { method: 'GET', path: '/ocpi/versions' })).then(expectOcpi(200, 1000), expectHeader('x-hub-environment', undefined));
    await productionHub.given(cpo()).when(as('no-such-token', { method: 'GET', path: '/ocpi/versions' })).then(expectOcpi(401, 2000), expectHeader('x-hub-environment', undefined));
  });
});
