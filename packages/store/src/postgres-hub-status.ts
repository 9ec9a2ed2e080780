import { pgPool } from './pg-pool.ts';
import type { Database } from './pool.ts';
import { RECIPIENT_CC, RECIPIENT_PID } from './delivery-rows.ts';

// What `hubctl status` shows of Postgres, read in one round of aggregate queries (one per section,
// never one per party): parties with their health, checks and rules; deliveries not yet delivered by
// receiving party; quarantined records; the outbox; and every consumer's stored positions.

export interface PartyStatus {
  readonly country_code: string;
  readonly party_id: string;
  readonly role: 'CPO' | 'EMSP';
  readonly name: string;
  readonly status: 'active' | 'suspended';
  /** platform_health of the party's platform; unknown until the prober has probed it. */
  readonly health: 'CONNECTED' | 'OFFLINE' | 'unknown';
  /** The OCPI versions the party's platform may use, and the one it chose (null before it registered). */
  readonly versions: string[];
  readonly version: string | null;
  readonly last_probe_at: string | null;
  /** Enabled routing rules with the party on its side (eMSP or CPO). */
  readonly routing_rules: number;
  /** The last partner check of its platform (docs/how-to/partner-check.md); null when none under its current registration. */
  readonly check: 'passed' | 'failed' | null;
  readonly last_check_at: string | null;
  /** The first failed check and its reason. */
  readonly check_failure: string | null;
}

export interface HubStatusRows {
  readonly parties: PartyStatus[];
  readonly deliveries: Array<{ emsp: string; pending: number; dead: number; unroutable: number }>;
  /** By consumer group and physical topic. */
  readonly quarantined: Array<{ group: string; topic: string; records: number }>;
  readonly outboxPending: number;
  readonly routingRules: number;
  /** The projector's next offset per read model and partition (the active generation). */
  readonly projectionPositions: Array<{ model: string; partition: number; next_offset: string }>;
  /** The dispatcher's next offset per consumer group, physical topic and partition. */
  readonly deliveryPositions: Array<{ consumer_group: string; topic: string; partition: number; next_offset: string }>;
}

export async function readHubStatusRows(db: Database): Promise<HubStatusRows> {
  const pool = pgPool(db);
  const [parties, deliveries, quarantined, outbox, rules, projector, dispatcher] = await Promise.all([
    pool.query<PartyStatus & { last_probe_at: Date | null; last_check_at: Date | null }>(
      `with rules as (
         select emsp_country_code as cc, emsp_party_id as pid, 'EMSP' as role, count(*)::int as n from routing_rules where enabled group by 1, 2
         union all
         select cpo_country_code, cpo_party_id, 'CPO', count(*)::int from routing_rules where enabled group by 1, 2)
       select p.country_code, p.party_id, p.role, p.name,
              case when p.suspended_at is null then 'active' else 'suspended' end as status,
              coalesce(h.status, 'unknown') as health, h.last_probe_at, coalesce(r.n, 0) as routing_rules,
              pl.versions, case when pl.registered_at is not null then pl.version end as version,
              case when c.ok then 'passed' when not c.ok then 'failed' end as check, c.checked_at as last_check_at, c.first_failure as check_failure
         from parties p
         left join platform_health h on h.platform_id = p.platform_id
         left join platforms pl on pl.id = p.platform_id
         left join partner_checks c on c.platform_id = p.platform_id and pl.registered_at is not null and c.checked_at >= pl.registered_at
         left join rules r on r.cc = p.country_code and r.pid = p.party_id and r.role = p.role
        order by p.country_code, p.party_id, p.role`,
    ),
    pool.query<{ emsp: string; pending: number; dead: number; unroutable: number }>(
      // By receiving party: the eMSP, or the CPO of a token (migration 018).
      `select ${RECIPIENT_CC} || '/' || ${RECIPIENT_PID} as emsp,
              count(*) filter (where state = 'pending')::int as pending,
              count(*) filter (where state = 'dead')::int as dead,
              count(*) filter (where state = 'unroutable')::int as unroutable
         from deliveries where state <> 'delivered' group by 1 order by 1`,
    ),
    pool.query<{ group: string; topic: string; records: number }>(
      `select consumer_group as group, topic, count(*)::int as records from consumer_quarantine where state = 'quarantined' group by 1, 2 order by 1, 2`,
    ),
    pool.query<{ n: number }>('select count(*)::int as n from registry_outbox where published_at is null'),
    pool.query<{ n: number }>('select count(*)::int as n from routing_rules where enabled'),
    pool.query<{ model: string; partition: number; next_offset: string }>(
      `select o.model, o.partition, o.next_offset from projection_offsets o join read_model_generations g on g.model = o.model and g.active = o.generation`,
    ),
    pool.query<{ consumer_group: string; topic: string; partition: number; next_offset: string }>('select consumer_group, topic, partition, next_offset from delivery_positions'),
  ]);
  return {
    parties: parties.rows.map((p) => ({ ...p, last_probe_at: p.last_probe_at ? p.last_probe_at.toISOString() : null, last_check_at: p.last_check_at ? p.last_check_at.toISOString() : null })),
    deliveries: deliveries.rows,
    quarantined: quarantined.rows,
    outboxPending: outbox.rows[0]?.n ?? 0,
    routingRules: rules.rows[0]?.n ?? 0,
    projectionPositions: projector.rows,
    deliveryPositions: dispatcher.rows,
  };
}
