import type { DeliveryKind } from '@hub/core';
import type { OcpiVersion, PartyRef } from '@hub/ocpi';
import { adapterFor, isNotRepresentable, versionFields, withoutVersionFields, type Location } from '@hub/versions';

// What a delivery sends, in the receiver's OCPI version (docs/decisions/0008-one-canonical-form-translated-at-the-edge.md):
// the record's canonical object translated by the version's adapter, without the hub-private member for
// a 2.2.1 receiver; a record the version cannot carry without invented data is parked with its reason.

type Json = Record<string, unknown>;

/** The body to send; or why not, and whether a later attempt may succeed (retry) or the record waits for a re-drive. */
export type DeliveryBody = { readonly ok: true; readonly body: unknown } | { readonly ok: false; readonly reason: string; readonly retry?: true };

/** The canonical Location a session or CDR happened at, from the locations read model. */
export type LocationOf = (cpo: PartyRef, locationId: string) => Promise<Json | undefined>;

export async function deliveryBody(kind: DeliveryKind, version: OcpiVersion, payload: Json, cpo: PartyRef, locationOf: LocationOf): Promise<DeliveryBody> {
  if (version === '2.2.1') return { ok: true, body: withoutVersionFields(payload) };
  const adapter = adapterFor(version);
  // A 2.1.1 Session or CDR carries its whole Location (mod_sessions.md 3.1, mod_cdrs.md 3.1): the one a
  // 2.1.1 CPO sent is in the record, else the hub reads it. A Location not projected yet is retried.
  // A 2.3.0 Session or CDR names its Location by id as 2.2.1 does (ocpi-2.3.0/mod_sessions.asciidoc,
  // Session object): nothing to read, nothing to wait for.
  const location = async (id: unknown): Promise<Location | undefined | 'missing'> => {
    if (version !== '2.1.1') return undefined;
    if (versionFields(payload, version)?.kept?.['location'] !== undefined) return undefined;
    const found = typeof id === 'string' ? ((await locationOf(cpo, id)) as Location | undefined) : undefined;
    return found ?? 'missing';
  };
  const missing = (id: unknown): DeliveryBody => ({ ok: false, retry: true, reason: `Location ${cpo.countryCode}/${cpo.partyId}/${String(id)} is not in the read model (yet): OCPI ${version} needs it` });
  try {
    switch (kind) {
      case 'session': {
        const at = await location(payload['location_id']);
        return at === 'missing' ? missing(payload['location_id']) : { ok: true, body: adapter.sessionOut(payload as never, at) };
      }
      case 'cdr': {
        const id = (payload['cdr_location'] as Json | undefined)?.['id'];
        const at = await location(id);
        return at === 'missing' ? missing(id) : { ok: true, body: adapter.cdrOut(payload as never, at) };
      }
      case 'token':
        return { ok: true, body: adapter.tokenOut(payload as never) };
      case 'command_result':
        return { ok: true, body: adapter.commandResultOut(payload as never) };
      // ocpi-2.3.0/mod_hub_client_info.asciidoc ClientInfo object: the same members as 2.2.1's (2.1.1
      // has no hubclientinfo: its parties are no recipients, postgres-client-info-recipients.ts), and
      // ocpi-2.3.0/mod_charging_profiles.asciidoc: the same objects as 2.2.1's (the ingress holds them in that form).
      case 'charging_profile_result':
      case 'active_charging_profile':
      case 'client_info':
        if (version === '2.3.0') return { ok: true, body: withoutVersionFields(payload) };
        return { ok: false, reason: `OCPI ${String(version)} has no ${kind} to deliver` };
      default:
        return { ok: false, reason: `OCPI ${version} has no ${String(kind)} to deliver` };
    }
  } catch (e) {
    if (isNotRepresentable(e)) return { ok: false, reason: e.message };
    throw e;
  }
}
