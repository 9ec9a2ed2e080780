import { OCPI_VERSION, type PartyRef } from '@hub/ocpi';
import { DEFAULT_VERSIONS, refuseJoin } from '@hub/registry';
import { connectionStatus, healthAfterProbe, IMMEDIATE_HEALTH, type Caller, type ClientInfo, type OutboxEvent, type RegistryStore } from '@hub/core';
import { pairKey, registryTables, registryView, roleKey, same, type InMemoryRegistryView, type RegistryTables } from './in-memory-registry-tables.ts';

export type { ActiveRoute, InMemoryRegistryView } from './in-memory-registry-tables.ts';

// The RegistryStore port (@hub/registry, ports.ts) in memory, for route tests without Postgres. It
// keeps what postgresRegistryStore keeps (platforms, parties, tokens, endpoints, overrides, routing
// rules, health) and answers as it does; registry-contract.ts runs the same rules against both.

export interface InMemoryRegistryStore extends RegistryStore {
  readonly view: InMemoryRegistryView;
  /** Registry audit events queued, oldest first (the outbox relay's input). */
  readonly outbox: readonly OutboxEvent[];
}

export function inMemoryRegistryStore(options: { now?: () => Date } = {}): InMemoryRegistryStore {
  const tables = registryTables(options.now ?? (() => new Date()));
  return {
    view: registryView(tables),
    outbox: tables.outbox,
    findCaller: async (tokenHash) => findCaller(tables, tokenHash),
    ...platformCredentials(tables),
    ...platformHealth(tables),
    ...partyDirectory(tables),
    clientInfo: async (platformId, page) => clientInfo(tables, platformId, page),
  };
}

/** The platform and parties a token (hash) stands for, unless revoked. */
function findCaller({ platforms, tokens, partiesOf, toParty }: RegistryTables, tokenHash: string): Caller | undefined {
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
}

type CredentialMethods = 'registerParty' | 'reissueInitialToken' | 'saveCredentials' | 'deleteCredentials';

/** Registering a party, and its platform's tokens through the credentials handshake and its undoing. */
function platformCredentials(t: RegistryTables): Pick<RegistryStore, CredentialMethods> {
  const { now, platforms, parties, tokens, outbox, partiesOf, revokeAll, touchPlatform, partyOf } = t;
  return {
    async registerParty(input) {
      const joined = input.platformId ? platforms.get(input.platformId) : undefined;
      if (input.platformId && !joined) throw new Error(`no platform ${input.platformId}`);
      if (joined) refuseJoin(joined.id, joined.versions, partiesOf(joined.id).length, input.versions);
      if (partyOf(input.party)) throw new Error(`party ${roleKey(input.party)} is already registered`);
      const platformId = input.platformId ?? t.newPlatformId();
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
  };
}

/** The partner's access (versions URL and sealed token) and the health its probes record. */
function platformHealth({ now, platforms, outbox, partiesOf }: RegistryTables): Pick<RegistryStore, 'partnerAccess' | 'registeredPlatforms' | 'recordProbe'> {
  return {
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
  };
}

type DirectoryMethods = 'listParties' | 'findParty' | 'overrideEndpoint' | 'setRoutingRule' | 'listRoutingRules' | 'setSuspended';

/** The hub's party directory: listings, endpoint overrides, routing rules and suspension. */
function partyDirectory({ now, parties, rules, overrides, outbox, toListing, partyOf }: RegistryTables): Pick<RegistryStore, DirectoryMethods> {
  return {
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
  };
}

/** The hub's client info a platform sees (OCPI hubclientinfo): its own parties and those routed to them. */
function clientInfo({ platforms, parties, rules, partiesOf }: RegistryTables, platformId: string, page: Parameters<RegistryStore['clientInfo']>[1]) {
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
}
