import type { HubEvent } from '@hub/events';
import type { InterfaceRole, OcpiVersion, PartnerRole, PartyRef, PartyRole } from '@hub/ocpi';
import type { Caller, ClientInfo, PartnerEndpoint, PartyListing } from './registry-model.ts';
import type { HealthPolicy } from './health.ts';

/** An audit event bound for a topic, written in the same transaction as the change it records. */
export interface OutboxEvent {
  readonly topic: string;
  readonly event: HubEvent;
}

export interface CredentialsChange {
  readonly platformId: string;
  /** The token the request authenticated with; revoked by the change (single use / rotation). */
  readonly presentedTokenHash: string;
  readonly newHubTokenHash: string;
  readonly partnerTokenSealed: Buffer;
  readonly versionsUrl: string;
  readonly version: OcpiVersion;
  readonly endpoints: readonly PartnerEndpoint[];
  readonly businessDetails: unknown;
  readonly outbox: readonly OutboxEvent[];
}

export interface Page<T> {
  readonly items: readonly T[];
  readonly total: number;
}

/** Port: the registry of platforms, parties, tokens, endpoints, routing rules and health. */
export interface RegistryStore {
  /** Resolves an unrevoked credentials token hash to its platform, or undefined. */
  findCaller(tokenHash: string): Promise<Caller | undefined>;

  registerParty(input: {
    readonly party: PartyRole;
    readonly name: string;
    /** Adds the role to an existing platform instead of creating one. */
    readonly platformId?: string;
    /**
     * The OCPI versions the platform may use; set when the platform is created (default 2.2.1 only).
     * Adding a party to an existing platform with other versions is refused, as is a second party
     * on a platform that may use 2.1.1 (its Credentials name one party: credentials.md, 2.1.1).
     */
    readonly versions?: readonly OcpiVersion[];
    readonly initialTokenHash: string;
    readonly outbox: (platformId: string) => readonly OutboxEvent[];
  }): Promise<{ platformId: string }>;

  /** Issues a new initial token for a platform; only while it has no credentials registered. */
  reissueInitialToken(platformId: string, initialTokenHash: string, outbox: readonly OutboxEvent[]): Promise<void>;

  /**
   * Applies a credentials exchange atomically: revokes the presented token, stores the new hub token,
   * the sealed partner token, the versions URL and endpoints. Resolves false when the presented token
   * was revoked concurrently (the other request won).
   */
  saveCredentials(change: CredentialsChange, mode: 'register' | 'update'): Promise<boolean>;

  /** Unregisters: revokes every hub token and forgets the partner's token and endpoints. */
  deleteCredentials(platformId: string, outbox: readonly OutboxEvent[]): Promise<void>;

  /** The partner's own token (sealed) and versions URL, for calls the hub makes to it. */
  partnerAccess(platformId: string): Promise<{ versionsUrl: string; partnerTokenSealed: Buffer } | undefined>;

  /** Platforms with registered credentials, for the health prober. */
  registeredPlatforms(): Promise<Array<{ platformId: string; versionsUrl: string; version: OcpiVersion; partnerTokenSealed: Buffer; parties: string[] }>>;

  /**
   * Stores a probe result and the health it makes under `policy` (health.ts; default: every probe
   * decides); true when the status changed (then the outbox event is recorded too).
   */
  recordProbe(
    platformId: string,
    result: { ok: boolean; error?: string },
    outboxIfChanged: (status: 'CONNECTED' | 'OFFLINE') => readonly OutboxEvent[],
    policy?: HealthPolicy,
  ): Promise<boolean>;

  listParties(filter?: { role?: PartnerRole }): Promise<PartyListing[]>;
  findParty(party: PartyRole): Promise<PartyListing | undefined>;

  /** Operator override of a party's receiver endpoint for a module; url undefined removes it. */
  overrideEndpoint(party: PartyRole, module: string, url: string | undefined, outbox: readonly OutboxEvent[]): Promise<void>;
  setRoutingRule(emsp: PartyRef, cpo: PartyRef, enabled: boolean, outbox: readonly OutboxEvent[]): Promise<void>;
  listRoutingRules(): Promise<Array<{ emsp: PartyRef; cpo: PartyRef; enabled: boolean; updatedAt: Date }>>;
  setSuspended(party: PartyRole, suspended: boolean, outbox: readonly OutboxEvent[]): Promise<void>;

  /**
   * ClientInfo of the parties visible to a platform: its own parties and those it has an active
   * routing rule with. Ordered by last_updated, then party, for stable pages.
   */
  clientInfo(
    platformId: string,
    page: { offset: number; limit: number; dateFrom?: Date; dateTo?: Date },
  ): Promise<Page<ClientInfo>>;
}

/** Port: the partner's side of OCPI, as far as the registry needs it (versions and details). */
export interface PartnerDirectory {
  /** `version`: the version the hub speaks to the partner, which decides the Authorization header (2.2.1 by default). */
  fetchVersions(versionsUrl: string, partnerToken: string, ids: RequestIds, version?: OcpiVersion): Promise<Array<{ version: string; url: string }>>;
  fetchVersionDetails(detailsUrl: string, partnerToken: string, ids: RequestIds, version?: OcpiVersion): Promise<{ version: string; endpoints: DiscoveredEndpoint[] }>;
}

/** An endpoint as a partner's version details list it: 2.1.1 endpoints carry no role. */
export interface DiscoveredEndpoint {
  readonly identifier: string;
  readonly role?: InterfaceRole;
  readonly url: string;
}

export interface RequestIds {
  readonly requestId?: string;
  readonly correlationId: string;
}

/** Port: seals and opens partner tokens at rest. */
export interface TokenCipher {
  seal(plain: string): Buffer;
  open(sealed: Buffer): string;
}
