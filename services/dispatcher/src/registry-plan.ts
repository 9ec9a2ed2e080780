import { registryEventTypes, type HubEvent } from '@hub/events';
import type { ConnectionStatus, PartyRef, PartyRole } from '@hub/ocpi';
import { connectionStatus, type ClientInfoSubject } from '@hub/core';

// What one registry event (hub.registry.v1) asks of the dispatcher: the ClientInfo of the
// parties it changed, pushed to their routed parties (mod_hub_client_info.asciidoc, Push model), and
// the eMSP tokens a CPO now routed to it must receive (item 1). Pure: the registry consumer runs it.

type Json = Record<string, unknown>;

export interface RegistryPlan {
  /**
   * Whose ClientInfo changed, and the status each gets from what the registry holds for it. A pair
   * (a rule enabled): each of its two parties' ClientInfo, to the other one only.
   */
  readonly clientInfo?: {
    readonly of: { readonly party: PartyRole } | { readonly platformId: string } | { readonly pair: { readonly emsp: PartyRef; readonly cpo: PartyRef } };
    readonly status: (stored: ClientInfoSubject) => ConnectionStatus;
  };
  /** The routes whose CPO gets the eMSP's current tokens: one pair, or every pair of a party. */
  readonly tokens?: { readonly emsp: PartyRef; readonly cpo: PartyRef } | { readonly party: PartyRole };
}

const stored = (s: ClientInfoSubject) => ({ suspended: s.suspended, registered: s.registered, health: s.health ?? ('UNKNOWN' as const) });

const isString = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
const role = (v: unknown): 'CPO' | 'EMSP' | undefined => (v === 'CPO' || v === 'EMSP' ? v : undefined);
function partyOf(data: Json): PartyRole | undefined {
  const r = role(data['role']);
  return isString(data['country_code']) && isString(data['party_id']) && r ? { countryCode: data['country_code'], partyId: data['party_id'], role: r } : undefined;
}
function refOf(v: unknown): PartyRef | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Json;
  return isString(o['country_code']) && isString(o['party_id']) ? { countryCode: o['country_code'], partyId: o['party_id'] } : undefined;
}

/**
 * The plan of a registry event: {} for one that asks nothing (an endpoint override, a rule disabled),
 * undefined for one whose payload lacks what its type promises (the caller quarantines it).
 */
export function registryPlanOf(event: HubEvent): RegistryPlan | undefined {
  if (typeof event.data !== 'object' || event.data === null || Array.isArray(event.data)) return undefined;
  const data = event.data as Json;
  switch (event.type) {
    case registryEventTypes.partyRegistered: {
      const party = partyOf(data);
      return party && { clientInfo: { of: { party }, status: (s) => connectionStatus(stored(s)) } };
    }
    case registryEventTypes.partySuspended: {
      const party = partyOf(data);
      return party && { clientInfo: { of: { party }, status: () => 'SUSPENDED' } };
    }
    case registryEventTypes.partyReinstated: {
      // A reinstated CPO or eMSP has its routes back: the CPOs of them get the eMSP's tokens.
      const party = partyOf(data);
      return party && { clientInfo: { of: { party }, status: (s) => connectionStatus({ ...stored(s), suspended: false }) }, tokens: { party } };
    }
    case registryEventTypes.platformHealthChanged: {
      const status = data['status'];
      if (!isString(data['platform_id']) || (status !== 'CONNECTED' && status !== 'OFFLINE')) return undefined;
      return { clientInfo: { of: { platformId: data['platform_id'] }, status: (s) => connectionStatus({ ...stored(s), health: status }) } };
    }
    // A credentials exchange is a successful probe (PLANNED -> CONNECTED); unregistering is PLANNED again.
    case registryEventTypes.credentialsRegistered:
      return isString(data['platform_id']) ? { clientInfo: { of: { platformId: data['platform_id'] }, status: (s) => connectionStatus({ ...stored(s), registered: true, health: 'CONNECTED' }) } } : undefined;
    case registryEventTypes.credentialsDeleted:
      return isString(data['platform_id']) ? { clientInfo: { of: { platformId: data['platform_id'] }, status: (s) => connectionStatus({ ...stored(s), registered: false }) } } : undefined;
    case registryEventTypes.routingRuleChanged: {
      const emsp = refOf(data['emsp']);
      const cpo = refOf(data['cpo']);
      if (!emsp || !cpo || typeof data['enabled'] !== 'boolean') return undefined;
      // The two parties now see each other in hubclientinfo: a ClientInfo new to each (Push model).
      return data['enabled'] ? { clientInfo: { of: { pair: { emsp, cpo } }, status: (s) => connectionStatus(stored(s)) }, tokens: { emsp, cpo } } : {};
    }
    default:
      return {};
  }
}
