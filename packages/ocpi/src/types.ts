// Small OCPI 2.2.1 value types shared by every package (types.asciidoc, credentials.asciidoc,
// mod_hub_client_info.asciidoc). Object types generated from schemas/ live in @hub/schemas.

export const OCPI_VERSION = '2.2.1';

export type PartnerRole = 'CPO' | 'EMSP';
export type Role = PartnerRole | 'HUB' | 'NAP' | 'NSP' | 'OTHER' | 'SCSP';
export type ConnectionStatus = 'CONNECTED' | 'OFFLINE' | 'PLANNED' | 'SUSPENDED';
export type InterfaceRole = 'SENDER' | 'RECEIVER';

/** A party as OCPI addresses it: country_code + party_id (+ role). */
export interface PartyRef {
  readonly countryCode: string;
  readonly partyId: string;
}

export interface PartyRole extends PartyRef {
  readonly role: PartnerRole;
}

/** CiString comparison (types.asciidoc, CiString): country codes and party ids are case-insensitive. */
export function partyKey(p: PartyRef): string {
  return `${p.countryCode.toUpperCase()}/${p.partyId.toUpperCase()}`;
}

export function sameParty(a: PartyRef, b: PartyRef): boolean {
  return partyKey(a) === partyKey(b);
}
