import { authorizationHeader } from './credentials-token.ts';
import type { OcpiVersion, PartyRef } from './types.ts';

/**
 * The headers of a call to a partner of `version`: OCPI 2.2.1's routing headers from one party to another
 * (transport_and_format.asciidoc, Message routing headers) when `route` is given, the client's Base64
 * Authorization otherwise; a 2.1.1 partner gets neither routing headers (2.1.1 has none) nor a Base64
 * token (transport_and_format.md, 2.1.1), but its token as it is.
 */
export function partnerHeaders(version: OcpiVersion, token: string, route: { from: PartyRef; to: PartyRef } | undefined): Record<string, string> {
  if (version === '2.1.1') return { authorization: authorizationHeader(token, version) };
  if (!route) return {};
  return {
    'ocpi-from-country-code': route.from.countryCode,
    'ocpi-from-party-id': route.from.partyId,
    'ocpi-to-country-code': route.to.countryCode,
    'ocpi-to-party-id': route.to.partyId,
  };
}
