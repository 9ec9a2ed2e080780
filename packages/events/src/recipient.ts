import type { PartyRef } from '@hub/ocpi';
import type { HubEvent } from './envelope.ts';

/**
 * The party an event is for: its `ocpi-to` header ("CC/PID", set by the ingress from the object's
 * cdr_token: mod_sessions.asciidoc and mod_cdrs.asciidoc, CdrToken names the eMSP). Events appended
 * without the header (older events; a Session PATCH that carries no cdr_token) fall back to the
 * payload's cdr_token; undefined when neither names a party. The one place that reads an event's
 * recipient: the dispatcher's consumer and hubctl replay both use it.
 */
export function recipientOf(event: Pick<HubEvent, 'to' | 'data'>): PartyRef | undefined {
  const [countryCode, partyId, ...rest] = (event.to ?? '').split('/');
  if (countryCode && partyId && rest.length === 0) return { countryCode: countryCode.toUpperCase(), partyId: partyId.toUpperCase() };
  const token = (event.data as { cdr_token?: { country_code?: unknown; party_id?: unknown } } | undefined)?.cdr_token;
  const cc = token?.country_code;
  const pid = token?.party_id;
  return typeof cc === 'string' && typeof pid === 'string' ? { countryCode: cc.toUpperCase(), partyId: pid.toUpperCase() } : undefined;
}
