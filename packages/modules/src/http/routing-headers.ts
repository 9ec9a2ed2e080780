import type { RequestHandler } from 'express';
import type { PartyRef } from '@hub/ocpi';
import { namedSender } from './answers.ts';

// transport_and_format.asciidoc, Message Routing: "these four headers SHALL be implemented for any
// request/response to/from a Functional Module". The hub's answer to the requesting platform is a
// "Direct response | Hub to requesting platform": TO the requesting party, FROM the receiving party;
// a "Broadcast response | Hub to requesting platform": TO the requesting party, FROM the hub. OCPI 2.1.1
// has no routing headers: its mounts do not use this.

const header = (value: string | string[] | undefined): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value.trim().toUpperCase() : undefined);

/**
 * Sets the routing headers of the answer before the handler runs (an error answer carries them too):
 * the requesting party is the request's OCPI-from, else the caller's one party; the receiving party
 * the request's OCPI-to, else the hub (it answers itself, or the request was a broadcast). A request
 * naming neither and sent with several parties gets FROM only: the hub cannot tell whom it answers.
 */
export function responseRoutingHeaders(hub: PartyRef): RequestHandler {
  return (req, res, next) => {
    const parties = req.caller?.parties ?? [];
    const requesting = namedSender(req) ?? (parties.length === 1 ? parties[0] : undefined);
    const toCountry = header(req.headers['ocpi-to-country-code']);
    const toParty = header(req.headers['ocpi-to-party-id']);
    const receiving = toCountry && toParty ? { countryCode: toCountry, partyId: toParty } : hub;
    if (requesting) {
      res.setHeader('OCPI-to-country-code', requesting.countryCode.toUpperCase());
      res.setHeader('OCPI-to-party-id', requesting.partyId.toUpperCase());
    }
    res.setHeader('OCPI-from-country-code', receiving.countryCode);
    res.setHeader('OCPI-from-party-id', receiving.partyId);
    next();
  };
}
