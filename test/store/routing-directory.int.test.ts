// The RoutingDirectory on real Postgres: delivery targets and forwards' receiver
// checks, decided by ACTIVE_ROUTES, the one condition of who may see whom that the list pulls use too.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateCredentialsToken, hashCredentialsToken } from '@hub/ocpi';
import { registerParty, setRoutingRule, setSuspended, type OperatorDeps } from '@hub/registry';
import type { RoutingDirectory } from '@hub/core';
import { ACTIVE_ROUTES, postgresRegistryStore, postgresRoutingDirectory } from '@hub/store';
import { createTestStack, type TestStack } from '@hub/testing';

describe('routing directory on Postgres', () => {
  let stack: TestStack;
  let deps: OperatorDeps;
  let routing: RoutingDirectory;
  const emsp = { countryCode: 'NL', partyId: 'EMP' };
  const cpo = { countryCode: 'BE', partyId: 'CPO' };

  before(async () => {
    stack = await createTestStack('routing_directory');
    deps = { store: postgresRegistryStore(stack.pool), source: 'test', actor: 'test' };
    routing = postgresRoutingDirectory(stack.pool);
    const { platformId, initialToken } = await registerParty(deps, { party: { ...emsp, role: 'EMSP' }, name: 'eMSP' });
    await registerParty(deps, { party: { ...cpo, role: 'CPO' }, name: 'CPO' });
    await deps.store.saveCredentials(
      {
        platformId,
        presentedTokenHash: hashCredentialsToken(initialToken),
        newHubTokenHash: hashCredentialsToken(generateCredentialsToken()),
        partnerTokenSealed: Buffer.from('sealed'),
        versionsUrl: 'https://emsp.example.com/ocpi/versions',
        version: '2.2.1',
        endpoints: [{ identifier: 'sessions', role: 'RECEIVER', url: 'https://emsp.example.com/ocpi/2.2.1/sessions' }],
        businessDetails: [],
        outbox: [],
      },
      'register',
    );
  });
  after(async () => {
    await stack?.cleanup();
  });

  const activeRoutes = async () =>
    (await stack.pool.query<{ emsp: string; cpo: string }>(`select a.emsp_country_code || '/' || a.emsp_party_id as emsp, a.cpo_country_code || '/' || a.cpo_party_id as cpo from (${ACTIVE_ROUTES}) a`)).rows;

  it('without a routing rule: no route, and deliveries are unroutable with the reason', async () => {
    assert.deepEqual(await activeRoutes(), []);
    assert.deepEqual(await routing.deliveryTarget('session', emsp, cpo), { ok: false, reason: 'no active routing rule NL/EMP <- BE/CPO' });
  });

  it('with an enabled rule: the route is active and sessions go to the eMSP receiver with its token, in the version the eMSP chose', async () => {
    await setRoutingRule(deps, { emsp, cpo, enabled: true });
    assert.deepEqual(await activeRoutes(), [{ emsp: 'NL/EMP', cpo: 'BE/CPO' }]);
    assert.deepEqual(await routing.deliveryTarget('session', emsp, cpo), { ok: true, url: 'https://emsp.example.com/ocpi/2.2.1/sessions', partnerTokenSealed: Buffer.from('sealed'), version: '2.2.1' });
    // A command result goes to the response_url it came with.
    const result = await routing.deliveryTarget('command_result', emsp, cpo, 'https://emsp.example.com/cb/1');
    assert.equal(result.ok && result.url, 'https://emsp.example.com/cb/1');
    // CDRs: the eMSP registered no cdrs receiver (noEndpoint: the refusal is a missing endpoint, which chargingprofiles answers NOT_SUPPORTED).
    assert.deepEqual(await routing.deliveryTarget('cdr', emsp, cpo), { ok: false, reason: 'no cdrs receiver URL for the eMSP', noEndpoint: true });
  });

  it('a suspended party ends the route for every user of ACTIVE_ROUTES', async () => {
    await setSuspended(deps, { party: { ...cpo, role: 'CPO' }, suspended: true });
    assert.deepEqual(await activeRoutes(), []);
    // Kept as unroutable with a reason that says what it waits for (reinstatement, then redrive).
    assert.deepEqual(await routing.deliveryTarget('session', emsp, cpo), { ok: false, reason: `routing ${emsp.countryCode}/${emsp.partyId} <- ${cpo.countryCode}/${cpo.partyId} paused: a party of it is suspended` });
    await setSuspended(deps, { party: { ...cpo, role: 'CPO' }, suspended: false });
    assert.equal((await routing.deliveryTarget('session', emsp, cpo)).ok, true);
    await setSuspended(deps, { party: { ...emsp, role: 'EMSP' }, suspended: true });
    assert.deepEqual(await routing.deliveryTarget('session', emsp, cpo), { ok: false, reason: 'eMSP NL/EMP suspended' });
  });

  it('a disabled rule ends the route', async () => {
    await setSuspended(deps, { party: { ...emsp, role: 'EMSP' }, suspended: false });
    await setRoutingRule(deps, { emsp, cpo, enabled: false });
    assert.deepEqual(await activeRoutes(), []);
    assert.equal((await routing.receiverTarget('EMSP', 'sessions', emsp, cpo)).ok, false);
  });
});
