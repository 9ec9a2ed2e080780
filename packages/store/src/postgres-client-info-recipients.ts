import type { ClientInfoRecipients } from '@hub/core';
import { pgPool } from './pg-pool.ts';
import type { Database } from './pool.ts';

// Who a ClientInfo is pushed to (mod_hub_client_info.asciidoc, Push model): the hub pushes
// a party's ClientInfo to "the connected parties" it can communicate with. Here: each party of the
// other role with an ENABLED routing rule with it (not the active routes, which hide suspended
// parties: a suspension must be announced), itself not suspended, on a platform that registered its
// credentials and whose last probe was CONNECTED. Whether it lists a hubclientinfo receiver (an
// operator override or its own endpoint) is returned, so the caller can skip and count the others.

type SubjectRow = { country_code: string; party_id: string; role: 'CPO' | 'EMSP'; suspended: boolean; registered: boolean; health: 'CONNECTED' | 'OFFLINE' | null };

export function postgresClientInfoRecipients(db: Database): ClientInfoRecipients {
  const pool = pgPool(db);
  return {
    async subjects(of) {
      const byParty = 'party' in of;
      // A platform id that is not a UUID names no platform (a registry event of another store).
      if (!byParty && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(of.platformId)) return [];
      const { rows } = await pool.query<SubjectRow>(
        `select p.country_code, p.party_id, p.role, p.suspended_at is not null as suspended,
                pl.registered_at is not null as registered, h.status as health
           from parties p
           join platforms pl on pl.id = p.platform_id
           left join platform_health h on h.platform_id = p.platform_id
          where ${byParty ? 'p.country_code = $1 and p.party_id = $2 and p.role = $3' : 'p.platform_id = $1::uuid'}
          order by p.country_code, p.party_id, p.role`,
        byParty ? [of.party.countryCode.toUpperCase(), of.party.partyId.toUpperCase(), of.party.role] : [of.platformId],
      );
      return rows.map((r) => ({ countryCode: r.country_code, partyId: r.party_id, role: r.role, suspended: r.suspended, registered: r.registered, health: r.health ?? undefined }));
    },

    async recipients(subject, module) {
      const { rows } = await pool.query<{ country_code: string; party_id: string; role: 'CPO' | 'EMSP'; has_receiver: boolean }>(
        // OCPI 2.1.1 has no hubclientinfo module: a party that chose it has no receiver whatever is registered.
        `select p.country_code, p.party_id, p.role,
                pl.version is distinct from '2.1.1' and coalesce((select o.url from endpoint_overrides o
                           where o.country_code = p.country_code and o.party_id = p.party_id and o.role = p.role and o.module = $4),
                         (select e.url from partner_endpoints e
                           where e.platform_id = p.platform_id and e.identifier = $4 and e.role = 'RECEIVER')) is not null as has_receiver
           from routing_rules r
           join parties p on case when $3 = 'CPO'
                 then p.role = 'EMSP' and p.country_code = r.emsp_country_code and p.party_id = r.emsp_party_id
                      and r.cpo_country_code = $1 and r.cpo_party_id = $2
                 else p.role = 'CPO' and p.country_code = r.cpo_country_code and p.party_id = r.cpo_party_id
                      and r.emsp_country_code = $1 and r.emsp_party_id = $2 end
           join platforms pl on pl.id = p.platform_id
           join platform_health h on h.platform_id = p.platform_id
          where r.enabled and p.suspended_at is null
            and pl.registered_at is not null and pl.partner_token_sealed is not null and h.status = 'CONNECTED'
          order by p.country_code, p.party_id, p.role`,
        [subject.countryCode.toUpperCase(), subject.partyId.toUpperCase(), subject.role, module],
      );
      return rows.map((r) => ({ countryCode: r.country_code, partyId: r.party_id, role: r.role, hasReceiver: r.has_receiver }));
    },
  };
}
