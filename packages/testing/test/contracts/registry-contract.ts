import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hashCredentialsToken, type PartyRole } from '@hub/ocpi';
import { registerPlatform } from '../../src/fakes/index.ts';
import { freshParty, type Ports } from './world.ts';

// The RegistryStore and CallerLookup ports: who a token is, and what ClientInfo a platform sees
// (credentials.asciidoc; mod_hub_client_info.asciidoc).

const cpoRole = (): PartyRole => ({ countryCode: 'NL', partyId: freshParty('C'), role: 'CPO' });
const emspRole = (): PartyRole => ({ countryCode: 'DE', partyId: freshParty('E'), role: 'EMSP' });

export function registryContract(ports: Ports): void {
  describe('RegistryStore and CallerLookup contract', () => {
    it('a registered platform’s hub token finds its caller, with every party and a label', async () => {
      const [a, b] = [cpoRole(), emspRole()];
      const { platformId, token } = await registerPlatform(ports().registry, { parties: [a, b] });
      const caller = await ports().callers.find(hashCredentialsToken(token));
      assert.equal(caller?.platformId, platformId);
      assert.equal(caller.tokenKind, 'HUB');
      assert.equal(caller.registered, true);
      assert.deepEqual(caller.parties.map((p) => `${p.countryCode}/${p.partyId}/${p.role}/${p.suspended}`).sort(), [`${a.countryCode}/${a.partyId}/CPO/false`, `${b.countryCode}/${b.partyId}/EMSP/false`].sort());
      assert.deepEqual(caller.label.split(',').sort(), [`${a.countryCode}/${a.partyId}/CPO`, `${b.countryCode}/${b.partyId}/EMSP`].sort());
    });

    it('an unknown token finds no caller; the initial token is INITIAL until the exchange revokes it', async () => {
      assert.equal(await ports().callers.find(hashCredentialsToken('never-issued')), undefined);
      const party = cpoRole();
      const { token: initial } = await registerPlatform(ports().registry, { parties: [party], registered: false });
      const before = await ports().callers.find(hashCredentialsToken(initial));
      assert.equal(before?.tokenKind, 'INITIAL');
      assert.equal(before.registered, false);
      const saved = await ports().registry.saveCredentials(
        { platformId: before.platformId, presentedTokenHash: hashCredentialsToken(initial), newHubTokenHash: hashCredentialsToken(`${initial}-hub`), partnerTokenSealed: Buffer.from('x'), versionsUrl: 'https://p.example/versions', version: '2.2.1', endpoints: [], businessDetails: {}, outbox: [] },
        'register',
      );
      assert.equal(saved, true);
      ports().callers.invalidate();
      assert.equal(await ports().callers.find(hashCredentialsToken(initial)), undefined);
      assert.equal((await ports().callers.find(hashCredentialsToken(`${initial}-hub`)))?.tokenKind, 'HUB');
    });

    it('an exchange with a revoked token, or a register of a registered platform, saves nothing', async () => {
      const { platformId, token } = await registerPlatform(ports().registry, { parties: [cpoRole()] });
      const change = { platformId, presentedTokenHash: hashCredentialsToken(token), newHubTokenHash: hashCredentialsToken(`${token}-2`), partnerTokenSealed: Buffer.from('x'), versionsUrl: 'https://p.example/versions', version: '2.2.1' as const, endpoints: [], businessDetails: {}, outbox: [] };
      assert.equal(await ports().registry.saveCredentials(change, 'register'), false);
      assert.equal(await ports().registry.saveCredentials({ ...change, presentedTokenHash: hashCredentialsToken('revoked') }, 'update'), false);
      assert.equal(await ports().registry.saveCredentials(change, 'update'), true);
    });

    it('a party registered twice is refused', async () => {
      const party = cpoRole();
      await registerPlatform(ports().registry, { parties: [party] });
      await assert.rejects(registerPlatform(ports().registry, { parties: [party] }), /already registered/);
    });

    it('a suspension shows in the caller’s parties once the lookup is invalidated', async () => {
      const party = cpoRole();
      const { token } = await registerPlatform(ports().registry, { parties: [party] });
      await ports().registry.setSuspended(party, true, []);
      ports().callers.invalidate();
      assert.equal((await ports().callers.find(hashCredentialsToken(token)))?.parties[0]?.suspended, true);
      await ports().registry.setSuspended(party, false, []);
      ports().callers.invalidate();
      assert.equal((await ports().callers.find(hashCredentialsToken(token)))?.parties[0]?.suspended, false);
    });

    it('ClientInfo: own parties and routed peers, with their status; pages with a total', async () => {
      const [cpo, emsp, stranger, planned] = [cpoRole(), emspRole(), cpoRole(), cpoRole()];
      const { platformId } = await registerPlatform(ports().registry, { parties: [emsp] });
      await registerPlatform(ports().registry, { parties: [cpo] });
      await registerPlatform(ports().registry, { parties: [stranger] });
      await registerPlatform(ports().registry, { parties: [planned], registered: false });
      await ports().registry.setRoutingRule(emsp, cpo, true, []);
      await ports().registry.setRoutingRule(emsp, planned, true, []);
      await ports().registry.setSuspended(cpo, true, []);
      const all = await ports().registry.clientInfo(platformId, { offset: 0, limit: 10 });
      assert.equal(all.total, 3);
      const status = Object.fromEntries(all.items.map((i) => [`${i.party_id}/${i.role}`, i.status]));
      assert.deepEqual(status, { [`${emsp.partyId}/EMSP`]: 'CONNECTED', [`${cpo.partyId}/CPO`]: 'SUSPENDED', [`${planned.partyId}/CPO`]: 'PLANNED' });
      const second = await ports().registry.clientInfo(platformId, { offset: 1, limit: 1 });
      assert.equal(second.total, 3);
      assert.equal(second.items.length, 1);
      assert.deepEqual(second.items[0], all.items[1]);
      const past = await ports().registry.clientInfo(platformId, { offset: 5, limit: 1 });
      assert.deepEqual([past.items.length, past.total], [0, 3]);
    });
  });
}
