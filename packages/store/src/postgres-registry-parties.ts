import type { PartnerRole, PartyRef, PartyRole } from '@hub/ocpi';
import { connectionStatus, type ClientInfo, type RegistryStore } from '@hub/core';
import { inTransaction, type Pool } from './pg-pool.ts';
import { LISTING_SQL, notifyCredentials, queueOutbox, toListing, type ListingRow } from './registry-rows.ts';

// The registry store's operator half: parties and their listing, endpoint overrides, routing rules,
// suspension, and the ClientInfo a platform sees (mod_hub_client_info.asciidoc). ClientInfo lists
// suspended peers too (as SUSPENDED), so it does not use ACTIVE_ROUTES (postgres-routing-directory.ts).

export type RegistryParties = Pick<RegistryStore, 'listParties' | 'findParty' | 'overrideEndpoint' | 'setRoutingRule' | 'listRoutingRules' | 'setSuspended' | 'clientInfo'>;

export function postgresRegistryParties(pool: Pool): RegistryParties {
  return {
    listParties: listParties(pool),
    findParty: findParty(pool),
    overrideEndpoint: overrideEndpoint(pool),
    setRoutingRule: setRoutingRule(pool),
    listRoutingRules: listRoutingRules(pool),
    setSuspended: setSuspended(pool),
    clientInfo: clientInfo(pool),
  };
}

function listParties(pool: Pool): RegistryStore['listParties'] {
  return async (filter = {}) => {
    const { rows } = await pool.query<ListingRow>(
      `${LISTING_SQL} where ($1::text is null or p.role = $1) order by p.country_code, p.party_id, p.role`,
      [filter.role ?? null],
    );
    return rows.map(toListing);
  };
}

function findParty(pool: Pool): RegistryStore['findParty'] {
  return async (party) => {
    const { rows } = await pool.query<ListingRow>(`${LISTING_SQL} where p.country_code = $1 and p.party_id = $2 and p.role = $3`, [
      party.countryCode,
      party.partyId,
      party.role,
    ]);
    return rows[0] ? toListing(rows[0]) : undefined;
  };
}

function overrideEndpoint(pool: Pool): RegistryStore['overrideEndpoint'] {
  return (party, module, url, outbox) =>
    inTransaction(pool, async (client) => {
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
}

function setRoutingRule(pool: Pool): RegistryStore['setRoutingRule'] {
  return (emsp, cpo, enabled, outbox) =>
    inTransaction(pool, async (client) => {
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
}

function listRoutingRules(pool: Pool): RegistryStore['listRoutingRules'] {
  return async () => {
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
  };
}

function setSuspended(pool: Pool): RegistryStore['setSuspended'] {
  return (party: PartyRole, suspended, outbox) =>
    inTransaction(pool, async (client) => {
      const { rows } = await client.query<{ platform_id: string }>(
        `update parties set suspended_at = case when $4 then coalesce(suspended_at, now()) else null end, updated_at = now()
          where country_code = $1 and party_id = $2 and role = $3 returning platform_id`,
        [party.countryCode, party.partyId, party.role, suspended],
      );
      await queueOutbox(client, outbox);
      if (rows[0]) await notifyCredentials(client, rows[0].platform_id);
    });
}

function clientInfo(pool: Pool): RegistryStore['clientInfo'] {
  return async (platformId, page) => {
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
      const again = await clientInfo(pool)(platformId, { ...page, offset: 0, limit: 1 });
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
  };
}
