import type { EventLog } from '@hub/core';
import { topics } from '@hub/events';
import { projectedModules, topicOf } from '@hub/modules';
import { readHubStatusRows, type Database, type PartyStatus } from '@hub/store';
import type { CommandGroup } from './command-context.ts';

export type { PartyStatus };

// hubctl status: the hub on one screen. The store reads Postgres's part in one aggregate query per
// section (readHubStatusRows), so it answers as fast with thousands of parties as with ten. Postgres
// is the truth of the consumers' positions; Kafka gives the partition heads.

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

// Long because: one snapshot of the hub: the store's status rows and the topics' heads put together
// into one answer.
export async function readHubStatus(pool: Database, eventLog: EventLog): Promise<HubStatus> {
  const rows = await readHubStatusRows(pool);

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
  for (const r of rows.projectionPositions) position('projector', modelTopics[r.model] ?? r.model).set(r.partition, BigInt(r.next_offset));
  const logicalOf = new Map(Object.values(topics).map((t) => [eventLog.physical(t), t]));
  for (const r of rows.deliveryPositions) position(r.consumer_group, logicalOf.get(r.topic) ?? r.topic).set(r.partition, BigInt(r.next_offset));

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

  const list = rows.parties;
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
      routing_rules: rows.routingRules,
    },
    deliveries: rows.deliveries,
    consumer_lag: consumerLag,
    quarantined: rows.quarantined.map((r) => ({ ...r, topic: logicalOf.get(r.topic) ?? r.topic })),
    outbox_pending: rows.outboxPending,
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
