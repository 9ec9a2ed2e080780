import type { RequestHandler } from 'express';
import { sameParty, type PartyRef } from '@hub/ocpi';
import { namedSender } from './answers.ts';

// transport_and_format.asciidoc, Message Routing: "these four headers SHALL be implemented for any
// request/response to/from a Functional Module". The hub's answer to the requesting platform is a
// "Direct response | Hub to requesting platform": TO the requesting party, FROM the receiving party;
// a "Broadcast response | Hub to requesting platform": TO the requesting party, FROM the hub. OCPI 2.1.1
// has no routing headers: its mounts do not use this.

/** A routing header's value when it is a country_code (2 letters) or party_id (3 letters or digits), upper-cased (credentials.asciidoc, CredentialsRole): nothing else is echoed. */
const header = (value: string | string[] | undefined, shape: RegExp): string | undefined => (typeof value === 'string' && shape.test(value.trim()) ? value.trim().toUpperCase() : undefined);
const COUNTRY_CODE = /^[A-Za-z]{2}$/;
const PARTY_ID = /^[A-Za-z0-9]{3}$/;

/**
 * Sets the routing headers of the answer before the handler runs, after authentication (an error of
 * the handler carries them too; an authentication refusal does not):
 * the requesting party is the request's OCPI-from, else the caller's one party; the receiving party
 * the request's OCPI-to, else the hub (it answers itself, or the request was a broadcast). A request
 * naming neither and sent with several parties gets FROM only: the hub cannot tell whom it answers.
 */
export function responseRoutingHeaders(hub: PartyRef): RequestHandler {
  return (req, res, next) => {
    const parties = req.caller?.parties ?? [];
    // The requesting party is one of the caller's own: an OCPI-from naming another is not echoed.
    const sender = namedSender(req);
    const named = sender && parties.find((p) => sameParty(p, sender));
    const requesting = named ?? (parties.length === 1 ? parties[0] : undefined);
    const toCountry = header(req.headers['ocpi-to-country-code'], COUNTRY_CODE);
    const toParty = header(req.headers['ocpi-to-party-id'], PARTY_ID);
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
