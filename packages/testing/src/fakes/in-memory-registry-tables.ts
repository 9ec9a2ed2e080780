import type { OcpiVersion, PartyRef, PartyRole } from '@hub/ocpi';
import { DEFAULT_VERSIONS } from '@hub/registry';
import { connectionStatus, type OutboxEvent, type PartnerEndpoint, type Party, type PartyListing } from '@hub/core';

// The in-memory registry's tables (in-memory-registry-store.ts), the lookups its methods share, and
// the view the other in-memory adapters read them through.

interface PlatformState {
  readonly id: string;
  readonly name: string;
  versionsUrl?: string;
  version?: OcpiVersion;
  readonly versions: readonly OcpiVersion[];
  registeredAt?: Date;
  partnerTokenSealed?: Buffer;
  endpoints: PartnerEndpoint[];
  health?: { status: 'CONNECTED' | 'OFFLINE'; lastProbeAt: Date; lastError?: string; changedAt: Date; failures?: number; successes?: number };
}

interface PartyState extends PartyRole {
  readonly platformId: string;
  readonly name: string;
  suspendedAt?: Date;
  updatedAt: Date;
}

interface RuleState {
  readonly emsp: PartyRef;
  readonly cpo: PartyRef;
  enabled: boolean;
  updatedAt: Date;
}

/** An eMSP-CPO pair with an enabled rule whose parties are both unsuspended (ACTIVE_ROUTES). */
export interface ActiveRoute {
  readonly emsp: PartyRef;
  readonly cpo: PartyRef;
  readonly emspPlatformId: string;
  readonly cpoPlatformId: string;
}

/** What the other in-memory adapters read of the registry (the Postgres ones read the same tables). */
export interface InMemoryRegistryView {
  party(party: PartyRole): (PartyRole & { platformId: string; suspended: boolean }) | undefined;
  platformParties(platformId: string): Array<PartyRole & { suspended: boolean }>;
  platform(platformId: string): { registered: boolean; versionsUrl?: string; version?: OcpiVersion; partnerTokenSealed?: Buffer; endpoints: readonly PartnerEndpoint[] } | undefined;
  override(party: PartyRole, module: string): string | undefined;
  hasRule(emsp: PartyRef, cpo: PartyRef): boolean;
  activeRoutes(): ActiveRoute[];
}

export const roleKey = (p: PartyRole) => `${p.countryCode}/${p.partyId}/${p.role}`;
export const pairKey = (emsp: PartyRef, cpo: PartyRef) => `${emsp.countryCode}/${emsp.partyId}|${cpo.countryCode}/${cpo.partyId}`;
export const same = (a: PartyRef, b: PartyRef) => a.countryCode === b.countryCode && a.partyId === b.partyId;

/** The platforms, parties, tokens, routing rules, endpoint overrides and outbox, and their shared lookups. */
export function registryTables(now: () => Date) {
  const platforms = new Map<string, PlatformState>();
  const parties = new Map<string, PartyState>();
  const tokens = new Map<string, { platformId: string; kind: 'INITIAL' | 'HUB'; revoked: boolean }>();
  const rules = new Map<string, RuleState>();
  const overrides = new Map<string, string>();
  const outbox: OutboxEvent[] = [];
  let nextPlatform = 1;

  const toParty = (p: PartyState): Party => ({
    countryCode: p.countryCode,
    partyId: p.partyId,
    role: p.role,
    platformId: p.platformId,
    name: p.name,
    suspended: p.suspendedAt !== undefined,
    updatedAt: p.updatedAt,
  });
  const partiesOf = (platformId: string) =>
    [...parties.values()].filter((p) => p.platformId === platformId).sort((a, b) => roleKey(a).localeCompare(roleKey(b)));
  const revokeAll = (platformId: string) => {
    for (const t of tokens.values()) if (t.platformId === platformId) t.revoked = true;
  };
  const touchPlatform = (platformId: string) => {
    for (const p of partiesOf(platformId)) p.updatedAt = now();
  };
  const toListing = (p: PartyState): PartyListing => {
    const platform = platforms.get(p.platformId);
    const registered = platform?.registeredAt !== undefined;
    const receiverOverrides: Record<string, string> = {};
    for (const [k, url] of overrides) if (k.startsWith(`${roleKey(p)}/`)) receiverOverrides[k.slice(roleKey(p).length + 1)] = url;
    return {
      ...toParty(p),
      platformName: platform?.name ?? '',
      registered,
      connectionStatus: connectionStatus({ suspended: p.suspendedAt !== undefined, registered, health: platform?.health?.status ?? 'UNKNOWN' }),
      lastProbeAt: platform?.health?.lastProbeAt,
      lastProbeError: platform?.health?.lastError,
      receiverOverrides,
      versions: platform?.versions ?? DEFAULT_VERSIONS,
      version: registered ? platform?.version : undefined,
    };
  };
  const partyOf = (p: PartyRole) => parties.get(roleKey(p));
  const newPlatformId = () => `platform-${nextPlatform++}`;
  return { now, platforms, parties, tokens, rules, overrides, outbox, newPlatformId, toParty, partiesOf, revokeAll, touchPlatform, toListing, partyOf };
}

export type RegistryTables = ReturnType<typeof registryTables>;

/** What the other in-memory adapters read of the registry tables. */
export function registryView({ platforms, rules, overrides, partiesOf, partyOf }: RegistryTables): InMemoryRegistryView {
  return {
    party(p) {
      const found = partyOf(p);
      return found && { countryCode: found.countryCode, partyId: found.partyId, role: found.role, platformId: found.platformId, suspended: found.suspendedAt !== undefined };
    },
    platformParties: (platformId) => partiesOf(platformId).map((p) => ({ countryCode: p.countryCode, partyId: p.partyId, role: p.role, suspended: p.suspendedAt !== undefined })),
    platform(platformId) {
      const p = platforms.get(platformId);
      if (!p) return undefined;
      return {
        registered: p.registeredAt !== undefined,
        ...(p.versionsUrl !== undefined ? { versionsUrl: p.versionsUrl } : {}),
        ...(p.version !== undefined ? { version: p.version } : {}),
        ...(p.partnerTokenSealed !== undefined ? { partnerTokenSealed: p.partnerTokenSealed } : {}),
        endpoints: p.endpoints,
      };
    },
    override: (p, module) => overrides.get(`${roleKey(p)}/${module}`),
    hasRule: (emsp, cpo) => rules.get(pairKey(emsp, cpo))?.enabled === true,
    activeRoutes() {
      const routes: ActiveRoute[] = [];
      for (const r of rules.values()) {
        const e = partyOf({ ...r.emsp, role: 'EMSP' });
        const c = partyOf({ ...r.cpo, role: 'CPO' });
        if (r.enabled && e && c && !e.suspendedAt && !c.suspendedAt) routes.push({ emsp: r.emsp, cpo: r.cpo, emspPlatformId: e.platformId, cpoPlatformId: c.platformId });
      }
      return routes;
    },
  };
}
