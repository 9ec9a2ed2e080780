import { OCPI_VERSION, type OcpiVersion, type PartyRef, type PartyRole } from '@hub/ocpi';
import { connectionStatus, DEFAULT_VERSIONS, healthAfterProbe, IMMEDIATE_HEALTH, refuseJoin, type Caller, type ClientInfo, type OutboxEvent, type Party, type PartnerEndpoint, type PartyListing, type RegistryStore } from '@hub/registry';

// The RegistryStore port (@hub/registry, ports.ts) in memory, for route tests without Postgres. It
// keeps what postgresRegistryStore keeps (platforms, parties, tokens, endpoints, overrides, routing
// rules, health) and answers as it does; registry-contract.ts runs the same rules against both.

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

export interface InMemoryRegistryStore extends RegistryStore {
  readonly view: InMemoryRegistryView;
  /** Registry audit events queued, oldest first (the outbox relay's input). */
  readonly outbox: readonly OutboxEvent[];
}

const roleKey = (p: PartyRole) => `${p.countryCode}/${p.partyId}/${p.role}`;
const pairKey = (emsp: PartyRef, cpo: PartyRef) => `${emsp.countryCode}/${emsp.partyId}|${cpo.countryCode}/${cpo.partyId}`;
const same = (a: PartyRef, b: PartyRef) => a.countryCode === b.countryCode && a.partyId === b.partyId;

export function inMemoryRegistryStore(options: { now?: () => Date } = {}): InMemoryRegistryStore {
  const now = options.now ?? (() => new Date());
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

  const view: InMemoryRegistryView = {
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

  const store: InMemoryRegistryStore = {
    view,
    outbox,
    async findCaller(tokenHash) {
      const t = tokens.get(tokenHash);
      if (!t || t.revoked) return undefined;
      const own = partiesOf(t.platformId).map(toParty);
      const caller: Caller = {
        platformId: t.platformId,
        tokenHash,
        tokenKind: t.kind,
        registered: platforms.get(t.platformId)?.registeredAt !== undefined,
        parties: own,
        versions: platforms.get(t.platformId)?.versions ?? DEFAULT_VERSIONS,
        version: platforms.get(t.platformId)?.version,
        label: own.map((p) => `${p.countryCode}/${p.partyId}/${p.role}`).join(','),
      };
      return caller;
    },
    async registerParty(input) {
      const joined = input.platformId ? platforms.get(input.platformId) : undefined;
      if (input.platformId && !joined) throw new Error(`no platform ${input.platformId}`);
      if (joined) refuseJoin(joined.id, joined.versions, partiesOf(joined.id).length, input.versions);
      if (partyOf(input.party)) throw new Error(`party ${roleKey(input.party)} is already registered`);
      const platformId = input.platformId ?? `platform-${nextPlatform++}`;
      if (!input.platformId) platforms.set(platformId, { id: platformId, name: input.name, endpoints: [], versions: input.versions ?? DEFAULT_VERSIONS });
      parties.set(roleKey(input.party), { ...input.party, platformId, name: input.name, updatedAt: now() });
      if (!input.platformId) tokens.set(input.initialTokenHash, { platformId, kind: 'INITIAL', revoked: false });
      outbox.push(...input.outbox(platformId));
      return { platformId };
    },
    async reissueInitialToken(platformId, initialTokenHash, events) {
      revokeAll(platformId);
      tokens.set(initialTokenHash, { platformId, kind: 'INITIAL', revoked: false });
      outbox.push(...events);
    },
    async saveCredentials(change, mode) {
      const presented = tokens.get(change.presentedTokenHash);
      const platform = platforms.get(change.platformId);
      if (!presented || presented.revoked || presented.platformId !== change.platformId || !platform) return false;
      if ((platform.registeredAt !== undefined) !== (mode === 'update')) return false;
      revokeAll(change.platformId);
      tokens.set(change.newHubTokenHash, { platformId: change.platformId, kind: 'HUB', revoked: false });
      Object.assign(platform, { versionsUrl: change.versionsUrl, version: change.version, partnerTokenSealed: change.partnerTokenSealed });
      platform.registeredAt ??= now();
      const endpoints = new Map(change.endpoints.map((e) => [`${e.identifier}/${e.role}`, e]));
      platform.endpoints = [...endpoints.values()];
      const at = now();
      platform.health = { status: 'CONNECTED', lastProbeAt: at, changedAt: platform.health?.status === 'CONNECTED' ? platform.health.changedAt : at };
      touchPlatform(change.platformId);
      outbox.push(...change.outbox);
      return true;
    },
    async deleteCredentials(platformId, events) {
      revokeAll(platformId);
      const platform = platforms.get(platformId);
      if (platform) {
        delete platform.versionsUrl;
        delete platform.version;
        delete platform.partnerTokenSealed;
        delete platform.registeredAt;
        delete platform.health;
        platform.endpoints = [];
      }
      touchPlatform(platformId);
      outbox.push(...events);
    },
    async partnerAccess(platformId) {
      const p = platforms.get(platformId);
      return p?.registeredAt && p.versionsUrl && p.partnerTokenSealed ? { versionsUrl: p.versionsUrl, partnerTokenSealed: p.partnerTokenSealed } : undefined;
    },
    async registeredPlatforms() {
      return [...platforms.values()]
        .filter((p) => p.registeredAt && p.versionsUrl && p.partnerTokenSealed)
        .sort((a, b) => a.id.localeCompare(b.id))
        .map((p) => ({ platformId: p.id, versionsUrl: p.versionsUrl ?? '', version: p.version ?? OCPI_VERSION, partnerTokenSealed: p.partnerTokenSealed ?? Buffer.alloc(0), parties: partiesOf(p.id).map(roleKey) }));
    },
    async recordProbe(platformId, result, outboxIfChanged, policy = IMMEDIATE_HEALTH) {
      const platform = platforms.get(platformId);
      const held = platform?.health;
      const next = healthAfterProbe(held && { status: held.status, failures: held.failures ?? 0, successes: held.successes ?? 0 }, result.ok, policy);
      const status = next.status;
      const changed = held?.status !== status;
      const at = now();
      if (platform) platform.health = { status, lastProbeAt: at, ...(result.error ? { lastError: result.error } : {}), changedAt: changed ? at : (platform.health?.changedAt ?? at), failures: next.failures, successes: next.successes };
      if (changed) outbox.push(...outboxIfChanged(status));
      return changed;
    },
    async listParties(filter = {}) {
      return [...parties.values()].filter((p) => !filter.role || p.role === filter.role).sort((a, b) => roleKey(a).localeCompare(roleKey(b))).map(toListing);
    },
    async findParty(party) {
      const p = partyOf(party);
      return p && toListing(p);
    },
    async overrideEndpoint(party, module, url, events) {
      if (url === undefined) overrides.delete(`${roleKey(party)}/${module}`);
      else overrides.set(`${roleKey(party)}/${module}`, url);
      outbox.push(...events);
    },
    async setRoutingRule(emsp, cpo, enabled, events) {
      const key = pairKey(emsp, cpo);
      const rule = rules.get(key) ?? { emsp: { countryCode: emsp.countryCode, partyId: emsp.partyId }, cpo: { countryCode: cpo.countryCode, partyId: cpo.partyId }, enabled, updatedAt: now() };
      rule.enabled = enabled;
      rule.updatedAt = now();
      rules.set(key, rule);
      for (const p of [partyOf({ ...emsp, role: 'EMSP' }), partyOf({ ...cpo, role: 'CPO' })]) if (p) p.updatedAt = now();
      outbox.push(...events);
    },
    async listRoutingRules() {
      return [...rules.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, r]) => ({ emsp: r.emsp, cpo: r.cpo, enabled: r.enabled, updatedAt: r.updatedAt }));
    },
    async setSuspended(party, suspended, events) {
      const p = partyOf(party);
      if (p) {
        if (suspended) p.suspendedAt ??= now();
        else delete p.suspendedAt;
        p.updatedAt = now();
      }
      outbox.push(...events);
    },
    async clientInfo(platformId, page) {
      const mine = partiesOf(platformId);
      const mineAs = (role: 'CPO' | 'EMSP', ref: PartyRef) => mine.some((m) => m.role === role && same(m, ref));
      const visible = [...parties.values()].filter(
        (p) =>
          p.platformId === platformId ||
          [...rules.values()].some(
            (r) => r.enabled && ((p.role === 'CPO' && same(p, r.cpo) && mineAs('EMSP', r.emsp)) || (p.role === 'EMSP' && same(p, r.emsp) && mineAs('CPO', r.cpo))),
          ),
      );
      const rows = visible
        .map((p) => {
          const platform = platforms.get(p.platformId);
          const changedAt = platform?.health?.changedAt ?? p.updatedAt;
          const lastUpdated = new Date(Math.max(p.updatedAt.getTime(), changedAt.getTime()));
          const info: ClientInfo = {
            party_id: p.partyId,
            country_code: p.countryCode,
            role: p.role,
            status: connectionStatus({ suspended: p.suspendedAt !== undefined, registered: platform?.registeredAt !== undefined, health: platform?.health?.status ?? 'UNKNOWN' }),
            last_updated: lastUpdated.toISOString(),
          };
          return { at: lastUpdated.getTime(), key: [p.countryCode, p.partyId, p.role], info };
        })
        .filter((r) => (!page.dateFrom || r.at >= page.dateFrom.getTime()) && (!page.dateTo || r.at < page.dateTo.getTime()))
        .sort((a, b) => a.at - b.at || a.key.join('\u0000').localeCompare(b.key.join('\u0000')));
      return { items: rows.slice(page.offset, page.offset + page.limit).map((r) => r.info), total: rows.length };
    },
  };
  return store;
}
