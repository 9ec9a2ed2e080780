// Credentials and version details between OCPI 2.1.1 (credentials.md 2.1, version_information_endpoint.md)
// and 2.2.1 (credentials.asciidoc 7.2.1, version_information_endpoint.asciidoc 6.2).
import type { Credentials, Role, VersionDetails } from '../canonical.ts';
import { nonEmpty } from '../version-fields.ts';
import type * as W from './types.ts';

/** The party role of a 2.1.1 partner: 2.1.1 knows CPOs and eMSPs only. */
export type PartyRole = 'CPO' | 'EMSP';

/** 2.1.1 Credentials are one party with no role (credentials.md 2.1): its one role is the one the party is registered with. */
export function credentialsIn(credentials: W.Credentials, role: Role): Credentials {
  const { token, url, ...party } = credentials;
  return { token, url, roles: [{ role, ...party }] };
}

/** The canonical Credentials (the hub's own) as 2.1.1: the first role's party; further roles are dropped. */
export function credentialsOut(credentials: Credentials): W.Credentials {
  const first = credentials.roles[0];
  if (!first) throw new Error('credentials without a role');
  const { role: _r, ...party } = first;
  return { token: credentials.token, url: credentials.url, ...party };
}

type Module211 = W.VersionDetails['endpoints'][number]['identifier'];
type InterfaceRole = VersionDetails['endpoints'][number]['role'];

/**
 * The interface a party of a role implements per 2.1.1 module (each module chapter's "CPO Interface" and
 * "eMSP Interface"), as 2.2.1 InterfaceRole (version_information_endpoint.asciidoc 6.2.3): the CPO is
 * Sender of locations, tariffs, sessions and CDRs and Receiver of tokens and commands; the eMSP the opposite.
 */
const ROLE: Readonly<Record<PartyRole, Readonly<Record<Exclude<Module211, 'credentials'>, InterfaceRole>>>> = {
  CPO: { locations: 'SENDER', tariffs: 'SENDER', sessions: 'SENDER', cdrs: 'SENDER', tokens: 'RECEIVER', commands: 'RECEIVER' },
  EMSP: { locations: 'RECEIVER', tariffs: 'RECEIVER', sessions: 'RECEIVER', cdrs: 'RECEIVER', tokens: 'SENDER', commands: 'SENDER' },
};

/** A 2.1.1 partner's version details with the roles its endpoints play; credentials serves both ways (credentials.md 1). */
export function versionDetailsIn(details: W.VersionDetails, partyRole: PartyRole): VersionDetails {
  return {
    version: details.version,
    endpoints: nonEmpty(
      details.endpoints.flatMap(({ identifier, url }): VersionDetails['endpoints'][number][] =>
        identifier === 'credentials' ? [{ identifier, role: 'SENDER', url }, { identifier, role: 'RECEIVER', url }] : [{ identifier, role: ROLE[partyRole][identifier], url }],
      ),
    ),
  };
}

const MODULES_211: ReadonlySet<string> = new Set<Module211>(['cdrs', 'commands', 'credentials', 'locations', 'sessions', 'tariffs', 'tokens']);

/**
 * The hub's version details as a 2.1.1 partner of `partyRole` reads them: per module the one endpoint of
 * the counterpart's interface (the hub is the eMSP side to a CPO, the CPO side to an eMSP); modules 2.1.1
 * has none of (chargingprofiles, hubclientinfo) are left out. version is 2.1.1.
 */
export function versionDetailsOut(details: VersionDetails, partyRole: PartyRole): W.VersionDetails {
  const counterpart: PartyRole = partyRole === 'CPO' ? 'EMSP' : 'CPO';
  const endpoints: W.VersionDetails['endpoints'][number][] = [];
  for (const { identifier, role, url } of details.endpoints) {
    if (!MODULES_211.has(identifier)) continue;
    const module = identifier as Module211;
    const wanted = module === 'credentials' ? endpoints.every((e) => e.identifier !== 'credentials') : ROLE[counterpart][module] === role;
    if (wanted) endpoints.push({ identifier: module, url });
  }
  // Every hub lists credentials (version_information_endpoint.md: required for all implementations).
  return { version: '2.1.1', endpoints: nonEmpty(endpoints) };
}
