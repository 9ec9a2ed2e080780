import { isOcpiVersion, OCPI_VERSION, OCPI_VERSIONS, type InterfaceRole, type OcpiVersion, type PartnerRole } from '@hub/ocpi';
import { OperatorInputError } from './operations.ts';
import { receivingRoleOf } from '@hub/modules';

// Which OCPI versions a platform may use (the operator's choice) and what follows from a version for
// the registry (docs/decisions/0008-one-canonical-form-translated-at-the-edge.md).

/** Parses an operator's "--versions 2.1.1,2.2.1": known versions, at least one, oldest first. */
export function parseVersions(list: string): OcpiVersion[] {
  const asked = list.split(',').map((v) => v.trim()).filter((v) => v.length > 0);
  const unknown = asked.filter((v) => !isOcpiVersion(v));
  if (unknown.length > 0) throw new OperatorInputError(`versions must be among ${OCPI_VERSIONS.join(', ')}, got ${unknown.join(', ')}`);
  if (asked.length === 0) throw new OperatorInputError(`versions must name at least one of ${OCPI_VERSIONS.join(', ')}`);
  return OCPI_VERSIONS.filter((v) => asked.includes(v));
}

/**
 * A party joins an existing platform (shared credentials) only with the platform's versions, and a
 * platform that may use 2.1.1 holds one party: a 2.1.1 Credentials object names exactly one
 * country_code and party_id, with no roles list (credentials.md, 2.1.1, Credentials object).
 */
export function refuseJoin(platformId: string, platformVersions: readonly OcpiVersion[], partyCount: number, requested: readonly OcpiVersion[] | undefined): void {
  if (requested && requested.join(',') !== platformVersions.join(',')) {
    throw new OperatorInputError(`platform ${platformId} may use ${platformVersions.join(', ')}: a party joins it with those versions`);
  }
  if (platformVersions.includes('2.1.1') && partyCount > 0) {
    throw new OperatorInputError(`platform ${platformId} may use OCPI 2.1.1, whose credentials name one party: register the party on a platform of its own`);
  }
}

/** The default versions of a new platform: 2.2.1 only, so a party registered as before behaves as before. */
export const DEFAULT_VERSIONS: readonly OcpiVersion[] = [OCPI_VERSION];

/**
 * OCPI 2.1.1 version details list endpoints without a role (version_information_endpoint.md, 2.1.1,
 * Endpoint class). The hub stores them under the role the module has on that side in 2.2.1 terms
 * (mod_*.md, 2.1.1: the "CPO interface" and "eMSP interface" of each module), so routing looks
 * endpoints up the same way for every version: a party receives the modules the other role owns (@hub/modules receivingRoleOf: an eMSP receives locations, tariffs, sessions and CDRs
 * and serves its tokens and the command callbacks; a CPO receives tokens and commands and serves the rest).
 */
export function endpointRoleIn211(identifier: string, partyRole: PartnerRole): InterfaceRole {
  return receivingRoleOf(identifier) === partyRole ? 'RECEIVER' : 'SENDER';
}
