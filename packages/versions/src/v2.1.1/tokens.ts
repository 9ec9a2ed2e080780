// Token, AuthorizationInfo and LocationReferences between OCPI 2.1.1 (mod_tokens.md 3.1, 3.2, 4.2) and
// 2.2.1 (mod_tokens.asciidoc 12.3.1, 12.3.2, 12.4.3).
import type { AuthorizationInfo, LocationReferences, Owner, Patch, Token } from '../canonical.ts';
import { compact, withoutVersionFields } from '../version-fields.ts';
import type * as W from './types.ts';

/**
 * A 2.1.1 Token as the canonical one: country_code and party_id are the sending eMSP's, auth_id is the
 * contract_id (both "Uniquely identifies the EV Driver contract token within the eMSP's platform":
 * mod_tokens.md 3.2, mod_tokens.asciidoc 12.3.2). TokenType OTHER and RFID exist in both.
 */
export function tokenIn(token: W.Token, owner: Owner): Token {
  const { auth_id, ...same } = token;
  return { country_code: owner.countryCode, party_id: owner.partyId, ...same, contract_id: auth_id };
}

/**
 * The canonical Token as 2.1.1: contract_id is the auth_id; AD_HOC_USER and APP_USER are OTHER
 * (mod_tokens.md 4.3 has no such types); country_code, party_id, group_id, default_profile_type and
 * energy_contract are dropped.
 */
export function tokenOut(token: Token): W.Token {
  const { country_code: _c, party_id: _p, contract_id, type, group_id: _g, default_profile_type: _d, energy_contract: _e, ...same } = token;
  return compact({ ...same, type: type === 'RFID' ? 'RFID' : 'OTHER', auth_id: contract_id });
}

export function tokenPatchIn(patch: Patch<W.Token>): Patch<Token> {
  const { auth_id, ...same } = patch;
  return auth_id === undefined ? same : { ...same, contract_id: auth_id };
}

export function tokenPatchOut(patch: Patch<Token>): Patch<W.Token> {
  const { country_code: _c, party_id: _p, contract_id, type, group_id: _g, default_profile_type: _d, energy_contract: _e, ...same } = patch;
  const out: Patch<W.Token> = { ...same };
  if (contract_id !== undefined) out.auth_id = contract_id;
  if (type) out.type = type === 'RFID' ? 'RFID' : 'OTHER';
  return out;
}

/**
 * A 2.1.1 eMSP's answer to a real-time authorization as the canonical one. 2.2.1 requires the Token
 * (mod_tokens.asciidoc 12.3.1): it is the one the hub asked about, passed in. connector_ids of the
 * location references has no 2.2.1 home (locationReferencesIn).
 */
export function authorizationInfoIn(info: W.AuthorizationInfo, token: Token | undefined): AuthorizationInfo {
  const { location, ...same } = info;
  // token is undefined only for a 2.1.1 caller, whose form has none (authorizationInfoOut).
  return compact({ ...same, token: token && withoutVersionFields(token), location: location && locationReferencesIn(location) }) as AuthorizationInfo;
}

/** The canonical AuthorizationInfo as 2.1.1: token and authorization_reference are dropped (2.1.1 has neither). */
export function authorizationInfoOut(info: AuthorizationInfo): W.AuthorizationInfo {
  const { token: _t, authorization_reference: _a, location, ...same } = info;
  return compact({ ...same, location: location && locationReferencesOut(location) });
}

/** 2.2.1 LocationReferences has no connector_ids (mod_tokens.asciidoc 12.4.3): they are dropped (the authorization is for the EVSEs). */
export function locationReferencesIn(references: W.LocationReferences): LocationReferences {
  const { connector_ids: _c, ...same } = references;
  return same;
}

export function locationReferencesOut(references: LocationReferences): W.LocationReferences {
  return { ...references };
}
