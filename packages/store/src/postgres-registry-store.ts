import type { PartnerRole, PartyRef, PartyRole } from '@hub/ocpi';
import type { Caller, ClientInfo, OutboxEvent, Party, PartyListing, RegistryStore } from '@hub/registry';
import { connectionStatus } from '@hub/registry';
import { inTransaction, type Pool, type PoolClient } from './pool.ts';

// RegistryStore on Postgres. Every change that affects who a token belongs to or what it may do
// notifies CREDENTIALS_CHANNEL in its transaction, so every ingress replica drops its cached callers
// the moment the change commits (see cached-caller-lookup.ts).
export const CREDENTIALS_CHANNEL = 'hub_credentials_changed';

async function queueOutbox(client: PoolClient, outbox: readonly OutboxEvent[]): Promise<void> {
  for (const o of outbox) {
    await client.query('insert into registry_outbox (topic, event) values ($1, $2)', [o.topic, JSON.stringify(o.event)]);
  }
  if (outbox.length > 0) await client.query(`select pg_notify('hub_registry_outbox', '')`);
}

async function notifyCredentials(client: PoolClient, platformId: string): Promise<void> {
  await client.query('select pg_notify($1, $2)', [CREDENTIALS_CHANNEL, platformId]);
}

interface PartyRow {
  country_code: string;
  party_id: string;
  role: PartnerRole;
  platform_id: string;
  name: string;
  suspended_at: Date | null;
  updated_at: Date;
}

const toParty = (r: PartyRow): Party => ({
  countryCode: r.country_code,
  partyId: r.party_id,
  role: r.role,
  platformId: r.platform_id,
  name: r.name,
  suspended: r.suspended_at !== null,
  updatedAt: r.updated_at,
});

const LISTING_SQL = `
  select p.*, pl.name as platform_name, pl.registered_at is not null as registered,
         h.status as health_status, h.last_probe_at, h.last_error,
         coalesce((select jsonb_object_agg(o.module, o.url) from endpoint_overrides o
                   where o.country_code = p.country_code and o.party_id = p.party_id and o.role = p.role), '{}'::jsonb) as overrides
    from parties p
    join platforms pl on pl.id = p.platform_id
    left join platform_health h on h.platform_id = p.platform_id`;

interface ListingRow extends PartyRow {
  platform_name: string;
  registered: boolean;
  health_status: 'CONNECTED' | 'OFFLINE' | null;
  last_probe_at: Date | null;
  last_error: string | null;
  overrides: Record<string, string>;
}

const toListing = (r: ListingRow): PartyListing => {
  const party = toParty(r);
  return {
    ...party,
    platformName: r.platform_name,
    registered: r.registered,
    connectionStatus: connectionStatus({ suspended: party.suspended, registered: r.registered, health: r.health_status ?? 'UNKNOWN' }),
    lastProbeAt: r.last_probe_at ?? undefined,
    lastProbeError: r.last_error ?? undefined,
    receiverOverrides: r.overrides,
  };
};

export function postgresRegistryStore(pool: Pool): RegistryStore {
  return {
    async findCaller(tokenHash) {
      const { rows } = await pool.query<PartyRow & { kind: 'INITIAL' | 'HUB'; registered: boolean; token_platform: string }>(
        `select t.kind, t.platform_id as token_platform, pl.registered_at is not null as registered, p.*
           from credentials_tokens t
           join platforms pl on pl.id = t.platform_id
           left join parties p on p.platform_id = t.platform_id
          where t.token_hash = $1 and t.revoked_at is null`,
        [tokenHash],
      );
      const first = rows[0];
      if (!first) return undefined;
      const parties = rows.filter((r) => r.country_code !== null).map(toParty);
      const caller: Caller = {
        platformId: first.token_platform,
        tokenHash,
        tokenKind: first.kind,
        registered: first.registered,
        parties,
        label: parties.map((p) => `${p.countryCode}/${p.partyId}/${p.role}`).join(','),
      };
      return caller;
    },

    registerParty(input) {
      return inTransaction(pool, async (client) => {
        let platformId = input.platformId;
        if (platformId) {
          const found = await client.query('select 1 from platforms where id = $1 for update', [platformId]);
          if (found.rowCount === 0) throw new Error(`no platform ${platformId}`);
        } else {
          const created = await client.query<{ id: string }>('insert into platforms (name) values ($1) returning id', [input.name]);
          platformId = created.rows[0]?.id ?? '';
        }
        const { party } = input;
        const inserted = await client.query(
          `insert into parties (country_code, party_id, role, platform_id, name) values ($1, $2, $3, $4, $5)
           on conflict do nothing`,
          [party.countryCode, party.partyId, party.role, platformId, input.name],
        );
        if (inserted.rowCount === 0) throw new Error(`party ${party.countryCode}/${party.partyId}/${party.role} is already registered`);
        if (!input.platformId) {
          await client.query(`insert into credentials_tokens (token_hash, platform_id, kind) values ($1, $2, 'INITIAL')`, [
            input.initialTokenHash,
            platformId,
          ]);
        }
        await queueOutbox(client, input.outbox(platformId));
        await notifyCredentials(client, platformId);
        return { platformId };
      });
    },

    reissueInitialToken(platformId, initialTokenHash, outbox) {
      return inTransaction(pool, async (client) => {
        await client.query(`update credentials_tokens set revoked_at = now() where platform_id = $1 and revoked_at is null`, [platformId]);
        await client.query(`insert into credentials_tokens (token_hash, platform_id, kind) values ($1, $2, 'INITIAL')`, [initialTokenHash, platformId]);
        await queueOutbox(client, outbox);
        await notifyCredentials(client, platformId);
      });
    },

    saveCredentials(change, mode) {
      return inTransaction(pool, async (client) => {
        // Lock the presented token: of two concurrent exchanges with one token, exactly one wins.
        const presented = await client.query(
          `select 1 from credentials_tokens where token_hash = $1 and platform_id = $2 and revoked_at is null for update`,
          [change.presentedTokenHash, change.platformId],
        );
        if (presented.rowCount === 0) return false;
        const platform = await client.query<{ registered: boolean }>(
          'select registered_at is not null as registered from platforms where id = $1 for update',
          [change.platformId],
        );
        if (platform.rows[0]?.registered !== (mode === 'update')) return false;
        // The old hub token (and the initial token) die in the same commit that creates the new one.
        await client.query(`update credentials_tokens set revoked_at = now() where platform_id = $1 and revoked_at is null`, [change.platformId]);
        await client.query(`insert into credentials_tokens (token_hash, platform_id, kind) values ($1, $2, 'HUB')`, [
          change.newHubTokenHash,
          change.platformId,
        ]);
        await client.query(
          `update platforms set versions_url = $2, version = $3, partner_token_sealed = $4, business_details = $5,
                  registered_at = coalesce(registered_at, now()), updated_at = now()
            where id = $1`,
          [change.platformId, change.versionsUrl, change.version, change.partnerTokenSealed, JSON.stringify(change.businessDetails)],
        );
        await client.query('delete from partner_endpoints where platform_id = $1', [change.platformId]);
        for (const e of change.endpoints) {
          await client.query(
            `insert into partner_endpoints (platform_id, identifier, role, url) values ($1, $2, $3, $4) on conflict do nothing`,
            [change.platformId, e.identifier, e.role, e.url],
          );
        }
        // A successful exchange just fetched the partner's versions: that is a successful probe.
        await client.query(
          `insert into platform_health (platform_id, status, last_probe_at, last_error, changed_at)
           values ($1, 'CONNECTED', now(), null, now())
           on conflict (platform_id) do update set
             changed_at = case when platform_health.status = 'CONNECTED' then platform_health.changed_at else now() end,
             status = 'CONNECTED', last_probe_at = now(), last_error = null`,
          [change.platformId],
        );
        await client.query('update parties set updated_at = now() where platform_id = $1', [change.platformId]);
        await queueOutbox(client, change.outbox);
        await notifyCredentials(client, change.platformId);
        return true;
      });
    },

    deleteCredentials(platformId, outbox) {
      return inTransaction(pool, async (client) => {
        await client.query(`update credentials_tokens set revoked_at = now() where platform_id = $1 and revoked_at is null`, [platformId]);
        await client.query(
          `update platforms set versions_url = null, version = null, partner_token_sealed = null, registered_at = null, updated_at = now() where id = $1`,
          [platformId],
        );
        await client.query('delete from partner_endpoints where platform_id = $1', [platformId]);
        await client.query('delete from platform_health where platform_id = $1', [platformId]);
        await client.query('update parties set updated_at = now() where platform_id = $1', [platformId]);
        await queueOutbox(client, outbox);
        await notifyCredentials(client, platformId);
      });
    },

    async partnerAccess(platformId) {
      const { rows } = await pool.query<{ versions_url: string; partner_token_sealed: Buffer }>(
        'select versions_url, partner_token_sealed from platforms where id = $1 and registered_at is not null',
        [platformId],
      );
      const r = rows[0];
      return r ? { versionsUrl: r.versions_url, partnerTokenSealed: r.partner_token_sealed } : undefined;
    },

    async registeredPlatforms() {
      const { rows } = await pool.query<{ id: string; versions_url: string; partner_token_sealed: Buffer; parties: string[] }>(
        `select pl.id, pl.versions_url, pl.partner_token_sealed,
                array(select p.country_code || '/' || p.party_id || '/' || p.role from parties p where p.platform_id = pl.id order by 1) as parties
           from platforms pl where pl.registered_at is not null order by pl.id`,
      );
      return rows.map((r) => ({ platformId: r.id, versionsUrl: r.versions_url, partnerTokenSealed: r.partner_token_sealed, parties: r.parties }));
    },

    recordProbe(platformId, result, outboxIfChanged) {
      return inTransaction(pool, async (client) => {
        const status = result.ok ? 'CONNECTED' : 'OFFLINE';
        const before = await client.query<{ status: string }>('select status from platform_health where platform_id = $1 for update', [platformId]);
        const changed = before.rows[0]?.status !== status;
        await client.query(
          `insert into platform_health (platform_id, status, last_probe_at, last_error, changed_at)
           values ($1, $2, now(), $3, now())
           on conflict (platform_id) do update set status = $2, last_probe_at = now(), last_error = $3,
             changed_at = case when $4 then now() else platform_health.changed_at end`,
          [platformId, status, result.error ?? null, changed],
        );
        if (changed) await queueOutbox(client, outboxIfChanged(status));
        return changed;
      });
    },

    async listParties(filter = {}) {
      const { rows } = await pool.query<ListingRow>(
        `${LISTING_SQL} where ($1::text is null or p.role = $1) order by p.country_code, p.party_id, p.role`,
        [filter.role ?? null],
      );
      return rows.map(toListing);
    },

    async findParty(party) {
      const { rows } = await pool.query<ListingRow>(`${LISTING_SQL} where p.country_code = $1 and p.party_id = $2 and p.role = $3`, [
        party.countryCode,
        party.partyId,
        party.role,
      ]);
      return rows[0] ? toListing(rows[0]) : undefined;
    },

    overrideEndpoint(party, module, url, outbox) {
      return inTransaction(pool, async (client) => {
        if (url === undefined) {
          await client.query('delete from endpoint_overrides where country_code = $1 and party_id = $2 and role = $3 and module = $4', [
            party.countryCode,
            party.partyId,
            party.role,
            module,
          ]);
        } else {
          await client.query(
            `insert into endpoint_overrides (country_code, party_id, role, module, url) values ($1, $2, $3, $4, $5)
             on conflict (country_code, party_id, role, module) do update set url = $5, updated_at = now()`,
            [party.countryCode, party.partyId, party.role, module, url],
          );
        }
        await queueOutbox(client, outbox);
      });
    },

    setRoutingRule(emsp, cpo, enabled, outbox) {
      return inTransaction(pool, async (client) => {
        await client.query(
          `insert into routing_rules (emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id, enabled) values ($1, $2, $3, $4, $5)
           on conflict (emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id) do update set enabled = $5, updated_at = now()`,
          [emsp.countryCode, emsp.partyId, cpo.countryCode, cpo.partyId, enabled],
        );
        // Routing decides which parties hubclientinfo shows: their last_updated moves with it.
        await client.query(
          `update parties set updated_at = now() where (country_code, party_id, role) in (($1, $2, 'EMSP'), ($3, $4, 'CPO'))`,
          [emsp.countryCode, emsp.partyId, cpo.countryCode, cpo.partyId],
        );
        await queueOutbox(client, outbox);
      });
    },

    async listRoutingRules() {
      const { rows } = await pool.query<{
        emsp_country_code: string;
        emsp_party_id: string;
        cpo_country_code: string;
        cpo_party_id: string;
        enabled: boolean;
        updated_at: Date;
      }>('select * from routing_rules order by emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id');
      return rows.map((r) => ({
        emsp: { countryCode: r.emsp_country_code, partyId: r.emsp_party_id } satisfies PartyRef,
        cpo: { countryCode: r.cpo_country_code, partyId: r.cpo_party_id } satisfies PartyRef,
        enabled: r.enabled,
        updatedAt: r.updated_at,
      }));
    },

    setSuspended(party: PartyRole, suspended, outbox) {
      return inTransaction(pool, async (client) => {
        const { rows } = await client.query<{ platform_id: string }>(
          `update parties set suspended_at = case when $4 then coalesce(suspended_at, now()) else null end, updated_at = now()
            where country_code = $1 and party_id = $2 and role = $3 returning platform_id`,
          [party.countryCode, party.partyId, party.role, suspended],
        );
        await queueOutbox(client, outbox);
        if (rows[0]) await notifyCredentials(client, rows[0].platform_id);
      });
    },

    async clientInfo(platformId, page) {
      const { rows } = await pool.query<{
        country_code: string;
        party_id: string;
        role: PartnerRole;
        suspended: boolean;
        registered: boolean;
        health: 'CONNECTED' | 'OFFLINE' | null;
        last_updated: Date;
        total: string;
      }>(
        `with mine as (select country_code, party_id, role from parties where platform_id = $1),
         visible as (
           select p.* from parties p where p.platform_id = $1
           union
           select p.* from parties p join routing_rules r on r.enabled and (
               (p.role = 'CPO' and p.country_code = r.cpo_country_code and p.party_id = r.cpo_party_id
                and exists (select 1 from mine m where m.role = 'EMSP' and m.country_code = r.emsp_country_code and m.party_id = r.emsp_party_id))
            or (p.role = 'EMSP' and p.country_code = r.emsp_country_code and p.party_id = r.emsp_party_id
                and exists (select 1 from mine m where m.role = 'CPO' and m.country_code = r.cpo_country_code and m.party_id = r.cpo_party_id)))
         ),
         info as (
           select v.country_code, v.party_id, v.role, v.suspended_at is not null as suspended,
                  pl.registered_at is not null as registered, h.status as health,
                  greatest(v.updated_at, coalesce(h.changed_at, v.updated_at)) as last_updated
             from visible v join platforms pl on pl.id = v.platform_id
             left join platform_health h on h.platform_id = v.platform_id
         )
         select *, count(*) over () as total from info
          where ($2::timestamptz is null or last_updated >= $2) and ($3::timestamptz is null or last_updated < $3)
          order by last_updated, country_code, party_id, role
          offset $4 limit $5`,
        [platformId, page.dateFrom ?? null, page.dateTo ?? null, page.offset, page.limit],
      );
      let total = Number(rows[0]?.total ?? 0);
      if (rows.length === 0 && page.offset > 0) {
        // Past the end: the window count is empty, so count separately for X-Total-Count.
        const again = await this.clientInfo(platformId, { ...page, offset: 0, limit: 1 });
        total = again.total;
      }
      const items: ClientInfo[] = rows.map((r) => ({
        party_id: r.party_id,
        country_code: r.country_code,
        role: r.role,
        status: connectionStatus({ suspended: r.suspended, registered: r.registered, health: r.health ?? 'UNKNOWN' }),
        last_updated: r.last_updated.toISOString(),
      }));
      return { items, total };
    },
  };
}
