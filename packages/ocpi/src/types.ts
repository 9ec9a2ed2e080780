// Small OCPI 2.2.1 value types shared by every package (types.asciidoc, credentials.asciidoc,
// mod_hub_client_info.asciidoc). Object types generated from schemas/ live in @hub/schemas.

export const OCPI_VERSION = '2.2.1';

/**
 * The OCPI versions the hub speaks with partners, oldest first. A party may use those the operator
 * allowed it (default: 2.2.1 only); events keep one canonical form whatever the version
 * (docs/decisions/0008-one-canonical-form-translated-at-the-edge.md).
 */
export const OCPI_VERSIONS = ['2.1.1', '2.2.1', '2.3.0'] as const;
export type OcpiVersion = (typeof OCPI_VERSIONS)[number];

export function isOcpiVersion(v: unknown): v is OcpiVersion {
  return typeof v === 'string' && (OCPI_VERSIONS as readonly string[]).includes(v);
}

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
