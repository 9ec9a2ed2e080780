// Who a 2.1.1 session or CDR is for. 2.1.1 names the driver only by auth_id (mod_sessions.md 3.1,
// mod_cdrs.md 3.1); 2.2.1 requires a CdrToken (mod_cdrs.asciidoc 10.4.5) with the eMSP's country_code
// and party_id, the token's uid and type, and the contract_id.
import type { CdrToken, Token } from '../canonical.ts';

export interface EmaId {
  /** ISO 3166-1 alpha-2, upper case. */
  readonly countryCode: string;
  /** The eMSP's provider id (an OCPI party_id), upper case. */
  readonly providerId: string;
  /** The 9-character eMA instance (eMI3: an ID type "C" and 8 characters). */
  readonly instance: string;
  /** The optional check digit. */
  readonly checkDigit?: string;
}

// ISO 15118-2 Annex H / eMI3 (DIN SPEC 91286) eMA-ID: country (2 letters), provider (3 alphanumerics),
// instance (9 alphanumerics), optional check digit; "-" separates all parts or none. Case-insensitive.
const EMA_ID = /^([A-Za-z]{2})(-?)([A-Za-z0-9]{3})\2([A-Za-z0-9]{9})(?:\2([A-Za-z0-9]))?$/;

/** The parts of an eMA-ID, e.g. NL-TNM-C12345678-X or NLTNMC12345678X, or undefined when it is none. */
export function parseEmaId(contractId: string): EmaId | undefined {
  const m = EMA_ID.exec(contractId);
  if (!m) return undefined;
  const [, country, , provider, instance, check] = m as unknown as [string, string, string, string, string, string | undefined];
  return { countryCode: country.toUpperCase(), providerId: provider.toUpperCase(), instance: instance.toUpperCase(), ...(check ? { checkDigit: check.toUpperCase() } : {}) };
}

export type CdrTokenResolution =
  | { readonly how: 'token'; readonly cdrToken: CdrToken }
  | { readonly how: 'ema-id-prefix'; readonly cdrToken: CdrToken }
  | { readonly how: 'unresolved' };

/**
 * The canonical CdrToken of a 2.1.1 auth_id. With the Token the hub knows for it (the token read model,
 * looked up by the caller by contract_id = auth_id): that token's party, uid and type. Otherwise, when the
 * auth_id is an eMA-ID (the form mod_tokens.md 3.2 recommends): its country and provider are the eMSP,
 * uid is the auth_id and type OTHER (the 2.1.1 sender names no token, mod_tokens.md 4.3 OTHER: "Other
 * type of token"). Else unresolved: the caller decides (e.g. refuse or hold the object).
 */
export function cdrTokenFromAuthId(authId: string, knownToken: Token | undefined): CdrTokenResolution {
  if (knownToken) {
    return { how: 'token', cdrToken: { country_code: knownToken.country_code, party_id: knownToken.party_id, uid: knownToken.uid, type: knownToken.type, contract_id: authId } };
  }
  const ema = parseEmaId(authId);
  if (!ema) return { how: 'unresolved' };
  return { how: 'ema-id-prefix', cdrToken: { country_code: ema.countryCode, party_id: ema.providerId, uid: authId, type: 'OTHER', contract_id: authId } };
}
