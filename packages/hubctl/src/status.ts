import type { EventLog } from '@hub/core';
import { topics } from '@hub/events';
import { projectedModules, topicOf } from '@hub/modules';
import { RECIPIENT_CC, RECIPIENT_PID, type Pool } from '@hub/store';
import type { CommandGroup } from './command-context.ts';

// hubctl status: the hub on one screen. One aggregate query per section, never one
// per party, so it answers as fast with thousands of parties as with ten. Postgres is the truth of the
// consumers' positions (projection_offsets, delivery_positions); Kafka gives the partition heads.

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

export interface HubStatus {
  readonly parties: PartyStatus[];
  readonly totals: { parties: number; cpo: number; emsp: number; suspended: number; connected: number; offline: number; unknown: number; routing_rules: number };
  readonly deliveries: Array<{ emsp: string; pending: number; dead: number; unroutable: number }>;
  /** Records between the partition heads and the stored positions; null when Kafka did not answer. */
  readonly consumer_lag: Array<{ group: string; topic: string; lag: number | null }>;
  readonly quarantined: Array<{ group: string; topic: string; records: number }>;
  readonly outbox_pending: number;
  readonly kafka_error?: string;
}

const LAG_TIMEOUT_MS = 10_000;

// Long because: one snapshot of the hub: the status queries run together, then their rows and the
// topics' heads are put together into one answer.
export async function readHubStatus(pool: Pool, eventLog: EventLog): Promise<HubStatus> {
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

  // Positions per consumer group and logical topic; the dispatcher stores physical topic names.
  const positions = new Map<string, { group: string; topic: string; at: Map<number, bigint> }>();
  const position = (group: string, topic: string) => {
    const key = `${group}\u0000${topic}`;
    const p = positions.get(key) ?? { group, topic, at: new Map<number, bigint>() };
    positions.set(key, p);
    return p.at;
  };
  const modelTopics: Record<string, string> = Object.fromEntries(projectedModules.map((m) => [m, topicOf(m)]));
  for (const t of Object.values(modelTopics)) position('projector', t);
  for (const r of projector.rows) position('projector', modelTopics[r.model] ?? r.model).set(r.partition, BigInt(r.next_offset));
  const logicalOf = new Map(Object.values(topics).map((t) => [eventLog.physical(t), t]));
  for (const r of dispatcher.rows) position(r.consumer_group, logicalOf.get(r.topic) ?? r.topic).set(r.partition, BigInt(r.next_offset));

  let kafkaError: string | undefined;
  const heads = new Map<string, Map<number, bigint> | undefined>();
  const topicNames = [...new Set([...positions.values()].map((p) => p.topic))];
  await Promise.all(
    topicNames.map(async (t) => {
      const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`Kafka did not answer within ${LAG_TIMEOUT_MS} ms`)), LAG_TIMEOUT_MS).unref());
      heads.set(t, await Promise.race([eventLog.latestOffsets(t), timeout]).catch((e: unknown) => void (kafkaError = (e as Error).message)));
    }),
  );
  const consumerLag = [...positions.values()]
    .map(({ group, topic, at }) => {
      const head = heads.get(topic);
      if (!head) return { group, topic, lag: null };
      // A partition without a stored position has all of its records ahead of the consumer.
      let lag = 0n;
      for (const [partition, end] of head) lag += end > (at.get(partition) ?? 0n) ? end - (at.get(partition) ?? 0n) : 0n;
      return { group, topic, lag: Number(lag) };
    })
    .sort((a, b) => a.group.localeCompare(b.group) || a.topic.localeCompare(b.topic));

  const list = parties.rows.map((p) => ({ ...p, last_probe_at: p.last_probe_at ? p.last_probe_at.toISOString() : null, last_check_at: p.last_check_at ? p.last_check_at.toISOString() : null }));
  const count = (f: (p: PartyStatus) => boolean) => list.filter(f).length;
  return {
    parties: list,
    totals: {
      parties: list.length,
      cpo: count((p) => p.role === 'CPO'),
      emsp: count((p) => p.role === 'EMSP'),
      suspended: count((p) => p.status === 'suspended'),
      connected: count((p) => p.health === 'CONNECTED'),
      offline: count((p) => p.health === 'OFFLINE'),
      unknown: count((p) => p.health === 'unknown'),
      routing_rules: rules.rows[0]?.n ?? 0,
    },
    deliveries: deliveries.rows,
    consumer_lag: consumerLag,
    quarantined: quarantined.rows.map((r) => ({ ...r, topic: logicalOf.get(r.topic) ?? r.topic })),
    outbox_pending: outbox.rows[0]?.n ?? 0,
    ...(kafkaError ? { kafka_error: kafkaError } : {}),
  };
}

/** At most this many party lines: beyond, only the parties that need a look (not CONNECTED or suspended). */
export const PARTY_LINES = 40;

export function formatHubStatus(s: HubStatus): string {
  const t = s.totals;
  const out: string[] = [];
  out.push(`parties: ${t.parties} (${t.cpo} CPO, ${t.emsp} eMSP; ${t.suspended} suspended) health: ${t.connected} CONNECTED, ${t.offline} OFFLINE, ${t.unknown} unknown; routing rules: ${t.routing_rules} enabled`);
  const attention = (p: PartyStatus) => p.health !== 'CONNECTED' || p.status === 'suspended' || p.check === 'failed';
  const shown = s.parties.length <= PARTY_LINES ? s.parties : s.parties.filter(attention).slice(0, PARTY_LINES);
  if (shown.length > 0) {
    out.push('  PARTY       ROLE  STATUS     HEALTH     RULES  LAST PROBE            CHECK   OCPI   NAME');
    for (const p of shown) {
      const check = p.check === 'passed' ? 'ok' : p.check === 'failed' ? 'FAILED' : '-';
      out.push(`  ${`${p.country_code}/${p.party_id}`.padEnd(10)}  ${p.role.padEnd(4)}  ${p.status.padEnd(9)}  ${p.health.padEnd(9)}  ${String(p.routing_rules).padStart(5)}  ${(p.last_probe_at ?? '-').slice(0, 19).padEnd(20)}  ${check.padEnd(6)}  ${(p.version ?? p.versions.join(',')).padEnd(5)}  ${p.name}`);
      // The reason where the operator looks first, above all for a partner the probe calls CONNECTED.
      if (p.check === 'failed') out.push(`              last check ${(p.last_check_at ?? '').slice(0, 19)} failed: ${p.check_failure ?? '?'} (hubctl partner check ${p.country_code}/${p.party_id})`);
    }
  }
  const checks = (c: PartyStatus['check']) => s.parties.filter((p) => p.check === c).length;
  if (shown.length < s.parties.length) {
    const needLook = s.parties.filter(attention).length;
    out.push(`  (${shown.length} of ${needLook} parties not CONNECTED, suspended or failing their check shown, ${s.parties.length - needLook} CONNECTED, active and passing not listed; hubctl status --json lists all)`);
  }
  out.push(`partner checks: ${checks('passed')} parties passed, ${checks('failed')} failed, ${checks(null)} not checked`);
  out.push(`deliveries not delivered:${s.deliveries.length === 0 ? ' none' : ''}`);
  if (s.deliveries.length > 0) {
    out.push('  EMSP        PENDING     DEAD  UNROUTABLE');
    for (const d of s.deliveries) out.push(`  ${d.emsp.padEnd(10)}  ${String(d.pending).padStart(7)}  ${String(d.dead).padStart(7)}  ${String(d.unroutable).padStart(10)}`);
  }
  out.push(`consumer lag (records behind the partition heads)${s.kafka_error ? `: Kafka unavailable (${s.kafka_error})` : ':'}`);
  for (const l of s.consumer_lag) out.push(`  ${l.group.padEnd(12)}  ${l.topic.padEnd(20)}  ${l.lag === null ? '?' : String(l.lag)}`);
  out.push(`quarantined records: ${s.quarantined.length === 0 ? 'none' : s.quarantined.map((q) => `${q.records} of ${q.topic} (group ${q.group})`).join(', ')}`);
  out.push(`registry outbox pending: ${s.outbox_pending}`);
  return out.join('\n');
}

/** `hubctl status`: the one screen, or the same as one JSON document with --json. */
export const runStatusCommand: CommandGroup = async (action, { deps, print }) => {
  if (action !== '') return undefined;
  const { pool, eventLog } = deps.status();
  const status = await readHubStatus(pool, eventLog);
  print(formatHubStatus(status), status);
  return 0;
};
