import type { PartyRef } from '@hub/ocpi';
import type { Delivery } from '@hub/core';
import { deliveryRuleOf, isDeliveredKind } from '@hub/modules';
import { cdrTokenFromAuthId, HUB_VERSION_FIELDS, type Token } from '@hub/versions';

// A 2.1.1 CPO names the driver of a session or CDR only by auth_id. One the hub could not attribute
// when it was received (no routed eMSP pushed a token with that contract_id, and it is no eMA-ID)
// was accepted with a cdr_token naming the hub itself (the ingress's unattributedCdrToken), so it is
// never lost. Each delivery attempt of such a row, the first and every operator re-drive, resolves
// the auth_id again by the same documented rule (docs/reference/version-mapping.md, Routing without
// cdr_token); once it names an eMSP the row becomes that eMSP's, else it stays parked as unroutable.

type Json = Record<string, unknown>;

export interface AttributionDeps {
  /** The tokens of eMSPs routed to the CPO with this contract_id, ordered by eMSP (the ingress's rule). */
  tokensByContractId(contractId: string, cpo: PartyRef): Promise<readonly Json[]>;
  reassign(id: string, emsp: PartyRef, payload: Json): Promise<'reassigned' | 'taken'>;
}

export type Attribution = { readonly ok: true; readonly delivery: Delivery } | { readonly ok: false; readonly reason: string };

/**
 * A session or CDR row (its delivery rule names the eMSP by cdr_token) of a 2.1.1 CPO whose cdr_token
 * names the hub: its driver is not attributed yet. A kind without a rule here is none (the worker parks it).
 */
export function isUnattributed(d: Delivery, hub: PartyRef): boolean {
  const namedBy = isDeliveredKind(d.kind) ? deliveryRuleOf(d.kind).emspNamedBy : undefined;
  if (namedBy === undefined || d.recipientRole !== 'EMSP') return false;
  if (d.emsp.countryCode !== hub.countryCode || d.emsp.partyId !== hub.partyId) return false;
  const fields = d.payload[HUB_VERSION_FIELDS] as Json | undefined;
  return fields?.['2.1.1'] !== undefined && typeof (d.payload[namedBy] as Json | undefined)?.['contract_id'] === 'string';
}

/** The row given to the eMSP its auth_id names now, or why it cannot be (the auth_id itself is personal data and not in the reason). */
export async function attribute(d: Delivery, deps: AttributionDeps): Promise<Attribution> {
  const authId = (d.payload['cdr_token'] as Json)['contract_id'] as string;
  const cpo = `${d.cpo.countryCode}/${d.cpo.partyId}`;
  const [known] = await deps.tokensByContractId(authId, d.cpo);
  const resolution = cdrTokenFromAuthId(authId, known as Token | undefined);
  if (resolution.how === 'unresolved') {
    return {
      ok: false,
      reason: `auth_id names no eMSP: no eMSP routed to ${cpo} pushed a token with it as contract_id, and it is no eMA-ID; re-drive once the token is pushed`,
    };
  }
  const emsp = { countryCode: resolution.cdrToken.country_code.toUpperCase(), partyId: resolution.cdrToken.party_id.toUpperCase() };
  const payload = { ...d.payload, cdr_token: resolution.cdrToken };
  if ((await deps.reassign(d.id, emsp, payload)) === 'taken') {
    return { ok: false, reason: `superseded: ${emsp.countryCode}/${emsp.partyId} holds a row of this ${d.kind} from a later push, which is the one delivered` };
  }
  return { ok: true, delivery: { ...d, emsp, payload } };
}
