// Who a ClientInfo is pushed to, and which tokens a newly routed CPO gets, on real Postgres:
// routed parties (either direction, enabled rules even when the subject is
// suspended), connected and not suspended themselves, with or without a hubclientinfo receiver.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ClientInfoRecipients, TokenResendSource } from '@hub/core';
import { generateCredentialsToken, hashCredentialsToken, type PartyRole } from '@hub/ocpi';
import { overrideEndpoint, registerParty, setRoutingRule, setSuspended, type OperatorDeps } from '@hub/registry';
import { postgresClientInfoRecipients, postgresRegistryStore, postgresRoutingDirectory, postgresTokenResend } from '@hub/store';
import { createTestStack, type TestStack } from '@hub/testing';

describe('ClientInfo recipients and token re-send on Postgres', () => {
  let stack: TestStack;
  let deps: OperatorDeps;
  let recipients: ClientInfoRecipients;
  let resend: TokenResendSource;
  const cpo: PartyRole = { countryCode: 'BE', partyId: 'CPO', role: 'CPO' };
  const withReceiver: PartyRole = { countryCode: 'NL', partyId: 'EM1', role: 'EMSP' };
  const noReceiver: PartyRole = { countryCode: 'NL', partyId: 'EM2', role: 'EMSP' };
  const unrouted: PartyRole = { countryCode: 'NL', partyId: 'EM3', role: 'EMSP' };
  const offline: PartyRole = { countryCode: 'NL', partyId: 'EM4', role: 'EMSP' };
  const unregistered: PartyRole = { countryCode: 'NL', partyId: 'EM5', role: 'EMSP' };
  const platforms = new Map<string, string>();
  const key = (p: PartyRole) => `${p.countryCode}/${p.partyId}/${p.role}`;

  const onboard = async (party: PartyRole, endpoints: Array<{ identifier: string; role: 'SENDER' | 'RECEIVER'; url: string }>, register = true) => {
    const { platformId, initialToken } = await registerParty(deps, { party, name: party.partyId });
    platforms.set(key(party), platformId);
    if (!register) return;
    await deps.store.saveCredentials(
      {
        platformId,
        presentedTokenHash: hashCredentialsToken(initialToken),
        newHubTokenHash: hashCredentialsToken(generateCredentialsToken()),
        partnerTokenSealed: Buffer.from('sealed'),
        versionsUrl: `https://${party.partyId.toLowerCase()}.example.com/ocpi/versions`,
        version: '2.2.1',
        endpoints,
        businessDetails: [],
        outbox: [],
      },
      'register',
    );
  };
  const clientInfoReceiver = (host: string) => [{ identifier: 'hubclientinfo', role: 'RECEIVER' as const, url: `https://${host}/ocpi/2.2.1/clientinfo` }];
  const names = (list: ReadonlyArray<PartyRole & { hasReceiver?: boolean }>) => list.map((p) => `${key(p)}${p.hasReceiver === undefined ? '' : p.hasReceiver ? ' +receiver' : ' -receiver'}`);

  before(async () => {
    stack = await createTestStack('client_info_recipients');
    deps = { store: postgresRegistryStore(stack.pool), source: 'test', actor: 'test' };
    recipients = postgresClientInfoRecipients(stack.pool);
    resend = postgresTokenResend(stack.pool);
    await onboard(cpo, clientInfoReceiver('cpo.example.com'));
    await onboard(withReceiver, clientInfoReceiver('em1.example.com'));
    await onboard(noReceiver, [{ identifier: 'sessions', role: 'RECEIVER', url: 'https://em2.example.com/sessions' }]);
    await onboard(unrouted, clientInfoReceiver('em3.example.com'));
    await onboard(offline, clientInfoReceiver('em4.example.com'));
    await onboard(unregistered, [], false);
    for (const emsp of [withReceiver, noReceiver, offline, unregistered]) await setRoutingRule(deps, { emsp, cpo, enabled: true });
    await deps.store.recordProbe(platforms.get(key(offline)) as string, { ok: false, error: 'timeout' }, () => []);
  });
  after(async () => {
    await stack?.cleanup();
  });

  it('a CPO\'s ClientInfo goes to its routed, connected eMSPs; whether each lists a receiver is said', async () => {
    assert.deepEqual(names(await recipients.recipients(cpo, 'hubclientinfo')), ['NL/EM1/EMSP +receiver', 'NL/EM2/EMSP -receiver']);
    // The other direction: an eMSP's ClientInfo goes to the CPOs routed to it.
    assert.deepEqual(names(await recipients.recipients(withReceiver, 'hubclientinfo')), ['BE/CPO/CPO +receiver']);
    assert.deepEqual(await recipients.recipients(unrouted, 'hubclientinfo'), []);
  });

  it('an operator override counts as a receiver', async () => {
    await overrideEndpoint(deps, { party: { countryCode: 'NL', partyId: 'EM2', role: 'EMSP' }, module: 'hubclientinfo', url: 'https://em2.example.com/clientinfo' });
    assert.deepEqual(names(await recipients.recipients(cpo, 'hubclientinfo')), ['NL/EM1/EMSP +receiver', 'NL/EM2/EMSP +receiver']);
    await stack.pool.query(`delete from endpoint_overrides where module = 'hubclientinfo'`);
    assert.deepEqual(names(await recipients.recipients(cpo, 'hubclientinfo')), ['NL/EM1/EMSP +receiver', 'NL/EM2/EMSP -receiver']);
  });

  it('a party on OCPI 2.1.1 has no ClientInfo receiver (2.1.1 has no hubclientinfo module), whatever is registered', async () => {
    await stack.pool.query(`update platforms set version = '2.1.1' where id = $1`, [platforms.get(key(withReceiver))]);
    await overrideEndpoint(deps, { party: withReceiver, module: 'hubclientinfo', url: 'https://em1.example.com/override' });
    assert.deepEqual(names(await recipients.recipients(cpo, 'hubclientinfo')), ['NL/EM1/EMSP -receiver', 'NL/EM2/EMSP -receiver']);
    await stack.pool.query(`delete from endpoint_overrides where module = 'hubclientinfo'`);
    await stack.pool.query(`update platforms set version = '2.2.1' where id = $1`, [platforms.get(key(withReceiver))]);
  });

  it('a suspended subject is still announced to its routed parties; a suspended recipient gets nothing', async () => {
    await setSuspended(deps, { party: cpo, suspended: true });
    assert.deepEqual(names(await recipients.recipients(cpo, 'hubclientinfo')), ['NL/EM1/EMSP +receiver', 'NL/EM2/EMSP -receiver']);
    assert.deepEqual((await recipients.subjects({ party: cpo })).map((s) => [key(s), s.suspended, s.registered, s.health]), [['BE/CPO/CPO', true, true, 'CONNECTED']]);
    // The delivery goes on the enabled rule, though the pair has no active route while the CPO is suspended.
    const routing = postgresRoutingDirectory(stack.pool);
    const target = await routing.deliveryTarget('client_info', withReceiver, cpo, undefined, 'EMSP');
    assert.equal(target.ok && target.url, 'https://em1.example.com/ocpi/2.2.1/clientinfo');
    assert.equal((await routing.deliveryTarget('session', withReceiver, cpo)).ok, false);
    // ... but not to the suspended CPO itself.
    assert.deepEqual(await routing.deliveryTarget('client_info', withReceiver, cpo, undefined, 'CPO'), { ok: false, reason: 'CPO BE/CPO suspended' });
    assert.deepEqual(await recipients.recipients(withReceiver, 'hubclientinfo'), []);
    await setSuspended(deps, { party: cpo, suspended: false });
  });

  it('a disabled rule ends it', async () => {
    await setRoutingRule(deps, { emsp: noReceiver, cpo, enabled: false });
    assert.deepEqual(names(await recipients.recipients(cpo, 'hubclientinfo')), ['NL/EM1/EMSP +receiver']);
    await setRoutingRule(deps, { emsp: noReceiver, cpo, enabled: true });
  });

  it('subjects of a platform, with what their status is made of; none for an unknown platform', async () => {
    assert.deepEqual((await recipients.subjects({ platformId: platforms.get(key(offline)) as string })).map((s) => [key(s), s.suspended, s.registered, s.health]), [['NL/EM4/EMSP', false, true, 'OFFLINE']]);
    assert.deepEqual((await recipients.subjects({ party: unregistered })).map((s) => [key(s), s.registered, s.health]), [['NL/EM5/EMSP', false, undefined]]);
    assert.deepEqual(await recipients.subjects({ platformId: 'not-a-uuid' }), []);
    assert.deepEqual(await recipients.subjects({ platformId: '00000000-0000-4000-8000-000000000000' }), []);
  });

  it('token re-send: the active routes of a pair or a party, and the eMSP\'s tokens of the active generation, by pages', async () => {
    const em1 = { countryCode: 'NL', partyId: 'EM1' };
    const be = { countryCode: 'BE', partyId: 'CPO' };
    assert.deepEqual(await resend.activePairs({ emsp: em1, cpo: be }), [{ emsp: em1, cpo: be }]);
    assert.deepEqual(await resend.activePairs({ emsp: { countryCode: 'NL', partyId: 'EM3' }, cpo: be }), []);
    assert.deepEqual((await resend.activePairs({ party: cpo })).map((p) => p.emsp.partyId), ['EM1', 'EM2', 'EM4', 'EM5']);
    await setSuspended(deps, { party: withReceiver, suspended: true });
    assert.deepEqual((await resend.activePairs({ party: cpo })).map((p) => p.emsp.partyId), ['EM2', 'EM4', 'EM5']);
    assert.deepEqual(await resend.activePairs({ party: withReceiver }), []);
    await setSuspended(deps, { party: withReceiver, suspended: false });

    const token = (uid: string) => ({ country_code: 'NL', party_id: 'EM1', uid, type: 'RFID', contract_id: `C-${uid}`, last_updated: '2026-01-01T00:00:00Z' });
    const insert = (generation: number, countryCode: string, partyId: string, uid: string) =>
      stack.pool.query(`insert into tokens (generation, country_code, party_id, id, last_updated, created_at, document) values ($1, $2, $3, $4, now(), now(), $5)`, [generation, countryCode, partyId, `${uid}|RFID`, JSON.stringify(token(uid))]);
    await insert(1, 'NL', 'EM1', 'A1');
    await insert(1, 'NL', 'EM1', 'A2');
    await insert(1, 'NL', 'EM1', 'A3');
    await insert(1, 'NL', 'EM2', 'B1');
    await insert(2, 'NL', 'EM1', 'OLDGEN');
    const first = await resend.tokens(em1, undefined, 2);
    assert.deepEqual(first.map((t) => t.id), ['A1|RFID', 'A2|RFID']);
    assert.equal(first[0]?.document['contract_id'], 'C-A1');
    assert.deepEqual((await resend.tokens(em1, 'A2|RFID', 2)).map((t) => t.id), ['A3|RFID']);
    assert.deepEqual(await resend.tokens(em1, 'A3|RFID', 2), []);
  });
});
