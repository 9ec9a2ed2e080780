import type { ConnectionStatus, InterfaceRole, OcpiVersion, PartnerRole, PartyRole } from '@hub/ocpi';

/** One partner connection: the credentials, versions URL and endpoints shared by its parties. */
export interface Platform {
  readonly id: string;
  readonly name: string;
  /** The partner's versions URL from its credentials; undefined until registered. */
  readonly versionsUrl: string | undefined;
  readonly version: string | undefined;
  /** The versions the operator allowed (hubctl party register --versions). */
  readonly versions: readonly OcpiVersion[];
  readonly registeredAt: Date | undefined;
}

export interface Party extends PartyRole {
  readonly platformId: string;
  readonly name: string;
  readonly suspended: boolean;
  readonly updatedAt: Date;
}

export interface PartnerEndpoint {
  readonly identifier: string;
  readonly role: InterfaceRole;
  readonly url: string;
}

export type TokenKind = 'INITIAL' | 'HUB';

/** Who is calling, resolved from the credentials token. */
export interface Caller {
  readonly platformId: string;
  readonly tokenHash: string;
  readonly tokenKind: TokenKind;
  /** True once the credentials exchange has happened (POST credentials). */
  readonly registered: boolean;
  readonly parties: readonly Party[];
  /** The OCPI versions these credentials may use, oldest first (the operator's choice). */
  readonly versions: readonly OcpiVersion[];
  /** The version chosen in the last credentials exchange; undefined before it. */
  readonly version: OcpiVersion | undefined;
  /** "CC/PID/ROLE,…" of the parties, computed once: the access log and metrics name the caller by it. */
  readonly label: string;
}

export interface PlatformHealth {
  readonly status: 'CONNECTED' | 'OFFLINE' | 'UNKNOWN';
  readonly lastProbeAt: Date | undefined;
  readonly lastError: string | undefined;
}

export interface PartyListing extends Party {
  readonly platformName: string;
  readonly registered: boolean;
  readonly connectionStatus: ConnectionStatus;
  readonly lastProbeAt: Date | undefined;
  readonly lastProbeError: string | undefined;
  readonly receiverOverrides: Readonly<Record<string, string>>;
  /** The OCPI versions the party's platform may use, and the one it chose (undefined before it registers). */
  readonly versions: readonly OcpiVersion[];
  readonly version: OcpiVersion | undefined;
}

/** OCPI 2.2.1 mod_hub_client_info.asciidoc, ClientInfo object. */
export interface ClientInfo {
  readonly party_id: string;
  readonly country_code: string;
  readonly role: PartnerRole;
  readonly status: ConnectionStatus;
  readonly last_updated: string;
}

/**
 * ConnectionStatus of a party (mod_hub_client_info.asciidoc, ConnectionStatus): SUSPENDED when the
 * operator suspended it, PLANNED until its credentials exchange, then CONNECTED or OFFLINE by the
 * last health probe (a credentials exchange is itself a successful probe).
 */
export function connectionStatus(p: { suspended: boolean; registered: boolean; health: PlatformHealth['status'] }): ConnectionStatus {
  if (p.suspended) return 'SUSPENDED';
  if (!p.registered) return 'PLANNED';
  return p.health === 'CONNECTED' ? 'CONNECTED' : 'OFFLINE';
}
