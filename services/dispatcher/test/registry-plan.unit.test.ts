// What each registry event asks of the dispatcher: whose ClientInfo is
// pushed with which status (mod_hub_client_info.asciidoc, ConnectionStatus), and which routes get the
// eMSP's tokens again.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClientInfoSubject } from '@hub/core';
import { newEvent, registryEventTypes } from '@hub/events';
import { registryPlanOf } from '../src/registry-plan.ts';

const event = (type: string, data: unknown) => newEvent({ type, source: 'test', subject: 'x', key: 'x', data });
const party = { country_code: 'NL', party_id: 'CPS', role: 'CPO', actor: 'op' };
const stored = (s: Partial<ClientInfoSubject> = {}): ClientInfoSubject => ({ countryCode: 'NL', partyId: 'CPS', role: 'CPO', suspended: false, registered: true, health: 'CONNECTED', ...s });

describe('registry plans', () => {
  it('a suspension is SUSPENDED whatever is stored; a reinstatement is the platform status and re-sends tokens', () => {
    const suspended = registryPlanOf(event(registryEventTypes.partySuspended, party));
    assert.deepEqual(suspended?.clientInfo?.of, { party: { countryCode: 'NL', partyId: 'CPS', role: 'CPO' } });
    assert.equal(suspended?.clientInfo?.status(stored({ suspended: false })), 'SUSPENDED');
    assert.equal(suspended?.tokens, undefined);
    const reinstated = registryPlanOf(event(registryEventTypes.partyReinstated, party));
    assert.equal(reinstated?.clientInfo?.status(stored({ suspended: true })), 'CONNECTED');
    assert.equal(reinstated?.clientInfo?.status(stored({ suspended: true, health: 'OFFLINE' })), 'OFFLINE');
    assert.deepEqual(reinstated?.tokens, { party: { countryCode: 'NL', partyId: 'CPS', role: 'CPO' } });
  });

  it("a health change is the event's status for every party of the platform, unless suspended or never registered", () => {
    const plan = registryPlanOf(event(registryEventTypes.platformHealthChanged, { platform_id: 'p1', status: 'OFFLINE', error: 'timeout' }));
    assert.deepEqual(plan?.clientInfo?.of, { platformId: 'p1' });
    assert.equal(plan?.clientInfo?.status(stored({ health: 'CONNECTED' })), 'OFFLINE');
    assert.equal(plan?.clientInfo?.status(stored({ suspended: true })), 'SUSPENDED');
    assert.equal(plan?.clientInfo?.status(stored({ registered: false })), 'PLANNED');
  });

  it('a registration is what is stored (PLANNED before the credentials exchange); credentials make it CONNECTED', () => {
    assert.equal(registryPlanOf(event(registryEventTypes.partyRegistered, { ...party, platform_id: 'p1', name: 'n' }))?.clientInfo?.status(stored({ registered: false, health: undefined })), 'PLANNED');
    const credentials = registryPlanOf(event(registryEventTypes.credentialsRegistered, { platform_id: 'p1', parties: [] }));
    assert.equal(credentials?.clientInfo?.status(stored({ registered: false, health: undefined })), 'CONNECTED');
    assert.equal(registryPlanOf(event(registryEventTypes.credentialsDeleted, { platform_id: 'p1', parties: [] }))?.clientInfo?.status(stored()), 'PLANNED');
  });

  it('an enabled rule re-sends the tokens of its pair and pushes each ClientInfo to the other; a disabled one and other events ask nothing', () => {
    const rule = (enabled: boolean) => event(registryEventTypes.routingRuleChanged, { emsp: { country_code: 'DE', party_id: 'EMR' }, cpo: { country_code: 'BE', party_id: 'TKC' }, enabled, actor: 'op' });
    const pair = { emsp: { countryCode: 'DE', partyId: 'EMR' }, cpo: { countryCode: 'BE', partyId: 'TKC' } };
    const enabled = registryPlanOf(rule(true));
    assert.deepEqual(enabled?.tokens, pair);
    // The two parties now see each other: each one's ClientInfo, as stored, to the other.
    assert.deepEqual(enabled?.clientInfo?.of, { pair });
    assert.equal(enabled?.clientInfo?.status(stored({ health: 'OFFLINE' })), 'OFFLINE');
    assert.deepEqual(registryPlanOf(rule(false)), {});
    assert.deepEqual(registryPlanOf(event(registryEventTypes.endpointOverridden, { ...party, module: 'sessions', url: null })), {});
  });

  it('a payload without what its type promises has no plan (the consumer quarantines it)', () => {
    assert.equal(registryPlanOf(event(registryEventTypes.partySuspended, { country_code: 'NL' })), undefined);
    assert.equal(registryPlanOf(event(registryEventTypes.platformHealthChanged, { platform_id: 'p1', status: 'MAYBE' })), undefined);
    assert.equal(registryPlanOf(event(registryEventTypes.routingRuleChanged, { emsp: 'DE/EMR', cpo: {}, enabled: true })), undefined);
    assert.equal(registryPlanOf(event(registryEventTypes.partyRegistered, null)), undefined);
    assert.equal(registryPlanOf(event(registryEventTypes.partyRegistered, [party])), undefined);
  });
});
