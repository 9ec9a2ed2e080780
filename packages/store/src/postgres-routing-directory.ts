import { deliveryRuleOf } from '@hub/modules';
import type { PartyRef } from '@hub/ocpi';
import { routeDecision, type RoutingDirectory, type RoutingTarget } from '@hub/core';
import { pgPool, type Pool } from './pg-pool.ts';
import type { Database } from './pool.ts';

// The RoutingDirectory port (@hub/core, routing.ts) on Postgres: the facts of a route read in one
// statement, the decision made from them by routeDecision (@hub/core); and the one condition of who may
// see whom (interface document, What the service does 5): the eMSP list pulls (postgres-read-model-store.ts), the
// deliveries and the tokens and commands forwards all decide by ACTIVE_ROUTES.

/**
 * The routes in force: an enabled routing rule whose eMSP and CPO are both registered and not
 * suspended, with both parties' platforms (the caller of a list pull is on the side that does not own
 * the objects: the eMSP for locations and tariffs). A subquery the planner inlines,
 * so each user filters it by the columns it knows.
 */
export const ACTIVE_ROUTES = `
  select r.emsp_country_code, r.emsp_party_id, r.cpo_country_code, r.cpo_party_id, e.platform_id as emsp_platform_id, c.platform_id as cpo_platform_id
    from routing_rules r
    join parties e on e.role = 'EMSP' and e.suspended_at is null
                  and e.country_code = r.emsp_country_code and e.party_id = r.emsp_party_id
    join parties c on c.role = 'CPO' and c.suspended_at is null
                  and c.country_code = r.cpo_country_code and c.party_id = r.cpo_party_id
   where r.enabled`;

/** An enabled rule, whoever is suspended: what a ClientInfo needs (the module table's route 'rule'). */
const ENABLED_RULES = `select r.emsp_country_code, r.emsp_party_id, r.cpo_country_code, r.cpo_party_id from routing_rules r where r.enabled`;

export function postgresRoutingDirectory(db: Database): RoutingDirectory {
  const pool = pgPool(db);
  return {
    deliveryTarget(kind, emsp, cpo, targetUrl, recipientRole = 'EMSP') {
      const rule = deliveryRuleOf(kind);
      return routingTarget(pool, recipientRole, rule.receiverModule, emsp, cpo, targetUrl, rule.route ?? 'active', rule.interfaceRole ?? 'RECEIVER');
    },

    receiverTarget(receiverRole, module, emsp, cpo, fixedUrl, interfaceRole = 'RECEIVER') {
      return routingTarget(pool, receiverRole, module, emsp, cpo, fixedUrl, 'active', interfaceRole);
    },
  };
}

/** The facts of the receiver's route (one statement), and where a record for it goes (routeDecision). */
async function routingTarget(
  pool: Pool,
  receiverRole: 'EMSP' | 'CPO',
  module: string,
  emsp: PartyRef,
  cpo: PartyRef,
  fixedUrl: string | undefined,
  route: 'active' | 'rule',
  interfaceRole: 'SENDER' | 'RECEIVER' = 'RECEIVER',
): Promise<RoutingTarget> {
  const receiver = receiverRole === 'EMSP' ? emsp : cpo;
  const { rows } = await pool.query<{
    party: boolean;
    suspended: boolean;
    rule: boolean;
    side_suspended: boolean;
    registered: boolean;
    sealed: Buffer | null;
    override_url: string | null;
    endpoint_url: string | null;
    version: string | null;
  }>(
    `select p.country_code is not null as party, p.suspended_at is not null as suspended,
            exists (select 1 from (${route === 'rule' ? ENABLED_RULES : ACTIVE_ROUTES}) a where a.emsp_country_code = $1 and a.emsp_party_id = $2
                      and a.cpo_country_code = $3 and a.cpo_party_id = $4) as rule,
            exists (select 1 from parties s where s.suspended_at is not null
                      and ((s.role = 'CPO' and s.country_code = $3 and s.party_id = $4) or (s.role = 'EMSP' and s.country_code = $1 and s.party_id = $2))) as side_suspended,
            pl.registered_at is not null as registered, pl.partner_token_sealed as sealed, pl.version,
            (select url from endpoint_overrides o where o.country_code = $6 and o.party_id = $7 and o.role = $8 and o.module = $5) as override_url,
            (select url from partner_endpoints e where e.platform_id = p.platform_id and e.identifier = $5 and e.role = $9) as endpoint_url
       from (select 1) one
       left join parties p on p.country_code = $6 and p.party_id = $7 and p.role = $8
       left join platforms pl on pl.id = p.platform_id`,
    [emsp.countryCode, emsp.partyId, cpo.countryCode, cpo.partyId, module, receiver.countryCode, receiver.partyId, receiverRole, interfaceRole],
  );
  const r = rows[0];
  return routeDecision(
    r && { party: r.party, suspended: r.suspended, rule: r.rule, sideSuspended: r.side_suspended, registered: r.registered, sealed: r.sealed, overrideUrl: r.override_url, endpointUrl: r.endpoint_url, version: r.version },
    { receiverRole, module, emsp, cpo, fixedUrl, interfaceRole },
  );
}
