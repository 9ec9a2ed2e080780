import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PartyRole } from '@hub/ocpi';
import { registerPlatform } from '../../src/fakes/index.ts';
import { freshParty, type Ports } from './world.ts';

// The RoutingDirectory port: where a forward or a delivery goes, and why it cannot (interface
// document, Routing; Events, rule 2).

export function routingContract(ports: Ports): void {
  describe('RoutingDirectory contract', () => {
    const pair = async (options: { rule?: boolean; cpoRegistered?: boolean } = {}) => {
      const cpo: PartyRole = { countryCode: 'NL', partyId: freshParty('C'), role: 'CPO' };
      const emsp: PartyRole = { countryCode: 'DE', partyId: freshParty('E'), role: 'EMSP' };
      await registerPlatform(ports().registry, { parties: [cpo], registered: options.cpoRegistered ?? true, endpoints: [{ identifier: 'tokens', role: 'RECEIVER', url: 'https://cpo.example/tokens' }] });
      await registerPlatform(ports().registry, { parties: [emsp], endpoints: [{ identifier: 'sessions', role: 'RECEIVER', url: 'https://emsp.example/sessions' }, { identifier: 'sessions', role: 'SENDER', url: 'https://emsp.example/sender' }, { identifier: 'tokens', role: 'SENDER', url: 'https://emsp.example/tokens' }] });
      if (options.rule ?? true) await ports().registry.setRoutingRule(emsp, cpo, true, []);
      return { cpo, emsp };
    };

    it('an active rule and a registered receiver endpoint give the URL and the sealed token', async () => {
      const { cpo, emsp } = await pair();
      const target = await ports().routing.receiverTarget('CPO', 'tokens', emsp, cpo);
      assert.equal(target.ok && target.url, 'https://cpo.example/tokens');
      const delivery = await ports().routing.deliveryTarget('session', emsp, cpo);
      assert.equal(delivery.ok && delivery.url, 'https://emsp.example/sessions');
      assert.ok(delivery.ok && delivery.partnerTokenSealed.length > 0);
    });

    it("a SENDER interface when asked (a CPO's real-time authorization calls the eMSP's tokens sender), never a RECEIVER one in its place", async () => {
      const { cpo, emsp } = await pair();
      const sender = await ports().routing.receiverTarget('EMSP', 'tokens', emsp, cpo, undefined, 'SENDER');
      assert.equal(sender.ok && sender.url, 'https://emsp.example/tokens');
      assert.ok(sender.ok && sender.partnerTokenSealed.length > 0);
      const receiver = await ports().routing.receiverTarget('EMSP', 'tokens', emsp, cpo);
      assert.equal(receiver.ok ? receiver.url : receiver.reason, 'no tokens receiver URL for the eMSP');
      // The one refusal that says the party does not support the module (chargingprofiles: NOT_SUPPORTED).
      assert.equal(!receiver.ok && receiver.noEndpoint, true);
      const noSender = await ports().routing.receiverTarget('CPO', 'tokens', emsp, cpo, undefined, 'SENDER');
      assert.equal(noSender.ok ? noSender.url : noSender.reason, 'no tokens sender URL for the CPO');
      await ports().registry.overrideEndpoint(emsp, 'tokens', 'https://override.example/emsp-tokens', []);
      const overridden = await ports().routing.receiverTarget('EMSP', 'tokens', emsp, cpo, undefined, 'SENDER');
      assert.equal(overridden.ok && overridden.url, 'https://override.example/emsp-tokens');
    });

    it('an operator override, then a URL given with the request, win over the registered endpoint', async () => {
      const { cpo, emsp } = await pair();
      await ports().registry.overrideEndpoint(cpo, 'tokens', 'https://override.example/tokens', []);
      const overridden = await ports().routing.receiverTarget('CPO', 'tokens', emsp, cpo);
      assert.equal(overridden.ok && overridden.url, 'https://override.example/tokens');
      const fixed = await ports().routing.deliveryTarget('command_result', emsp, cpo, 'https://emsp.example/cb/1');
      assert.equal(fixed.ok && fixed.url, 'https://emsp.example/cb/1');
    });

    it('refuses, saying why: unknown party, no rule, no URL, no credentials, suspended receiver, paused route', async () => {
      const reason = async (p: Promise<{ ok: boolean; reason?: string }>) => {
        const t = await p;
        return t.ok ? 'ok' : (t.reason ?? '');
      };
      const { cpo, emsp } = await pair({ rule: false });
      assert.match(await reason(ports().routing.receiverTarget('CPO', 'tokens', emsp, { countryCode: 'NL', partyId: 'ZZZ' })), /^unknown CPO NL\/ZZZ$/);
      assert.match(await reason(ports().routing.receiverTarget('CPO', 'tokens', emsp, cpo)), /^no active routing rule /);
      await ports().registry.setRoutingRule(emsp, cpo, true, []);
      assert.match(await reason(ports().routing.receiverTarget('CPO', 'commands', emsp, cpo)), /^no commands receiver URL for the CPO$/);
      await ports().registry.setSuspended(emsp, true, []);
      assert.match(await reason(ports().routing.receiverTarget('CPO', 'tokens', emsp, cpo)), /paused: a party of it is suspended$/);
      assert.match(await reason(ports().routing.deliveryTarget('session', emsp, cpo)), / suspended$/);
      const unregistered = await pair({ cpoRegistered: false });
      await ports().registry.overrideEndpoint(unregistered.cpo, 'tokens', 'https://cpo.example/t', []);
      assert.match(await reason(ports().routing.receiverTarget('CPO', 'tokens', unregistered.emsp, unregistered.cpo)), /has no credentials registered$/);
    });
  });
}
