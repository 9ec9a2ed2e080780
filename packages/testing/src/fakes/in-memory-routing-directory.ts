import { deliveryRuleOf } from '@hub/modules';
import { OCPI_VERSION, type PartyRef } from '@hub/ocpi';
import type { RoutingDirectory, RoutingTarget } from '@hub/core';
import type { InMemoryRegistryView } from './in-memory-registry-store.ts';

// The RoutingDirectory port (@hub/registry, routing.ts) over the in-memory registry, with the checks
// and reasons of postgresRoutingDirectory (routing-contract.ts runs the same rules against both).

export function inMemoryRoutingDirectory(registry: InMemoryRegistryView): RoutingDirectory {
  const directory: RoutingDirectory = {
    deliveryTarget(kind, emsp, cpo, targetUrl, recipientRole = 'EMSP') {
      const rule = deliveryRuleOf(kind);
      return target(recipientRole, rule.receiverModule, emsp, cpo, targetUrl, rule.route ?? 'active', rule.interfaceRole ?? 'RECEIVER');
    },
    receiverTarget(receiverRole, module, emsp, cpo, fixedUrl, interfaceRole = 'RECEIVER') {
      return target(receiverRole, module, emsp, cpo, fixedUrl, 'active', interfaceRole);
    },
  };
  async function target(
    receiverRole: 'EMSP' | 'CPO',
    module: string,
    emsp: PartyRef,
    cpo: PartyRef,
    fixedUrl: string | undefined,
    route: 'active' | 'rule',
    interfaceRole: 'SENDER' | 'RECEIVER' = 'RECEIVER',
  ): Promise<RoutingTarget> {
    const receiver = { ...(receiverRole === 'EMSP' ? emsp : cpo), role: receiverRole };
    const who = `${receiverRole === 'EMSP' ? 'eMSP' : 'CPO'} ${receiver.countryCode}/${receiver.partyId}`;
    const party = registry.party(receiver);
    if (!party) return { ok: false, reason: `unknown ${who}` };
    if (party.suspended) return { ok: false, reason: `${who} suspended` };
    // route 'rule' (ClientInfo): an enabled rule is enough, whoever of the pair is suspended.
    const active = route === 'rule' ? registry.hasRule(emsp, cpo) : registry.activeRoutes().some((r) => sameRef(r.emsp, emsp) && sameRef(r.cpo, cpo));
    const sideSuspended = registry.party({ ...cpo, role: 'CPO' })?.suspended === true || registry.party({ ...emsp, role: 'EMSP' })?.suspended === true;
    const pair = `${emsp.countryCode}/${emsp.partyId} <- ${cpo.countryCode}/${cpo.partyId}`;
    if (!active && sideSuspended) return { ok: false, reason: `routing ${pair} paused: a party of it is suspended` };
    if (!active) return { ok: false, reason: `no active routing rule ${pair}` };
    const platform = registry.platform(party.platformId);
    const endpoint = platform?.endpoints.find((e) => e.identifier === module && e.role === interfaceRole)?.url;
    const url = fixedUrl ?? registry.override(receiver, module) ?? endpoint;
    if (!url) return { ok: false, reason: `no ${module} ${interfaceRole.toLowerCase()} URL for the ${receiverRole === 'EMSP' ? 'eMSP' : 'CPO'}`, noEndpoint: true };
    if (!platform?.registered || !platform.partnerTokenSealed) return { ok: false, reason: `${who} has no credentials registered` };
    return { ok: true, url, partnerTokenSealed: platform.partnerTokenSealed, version: platform.version ?? OCPI_VERSION };
  }
  return directory;
}

const sameRef = (a: { countryCode: string; partyId: string }, b: { countryCode: string; partyId: string }) => a.countryCode === b.countryCode && a.partyId === b.partyId;
