// What the cluster tests check after the faults: every acknowledged push on Kafka as acknowledged,
// every acknowledged session and CDR at the eMSP, the read model equal to a clean replay; and the
// fault table they print (acknowledged / delivered / lost / duplicated, time to recover).
import { isDeepStrictEqual } from 'node:util';
import { SEALED_DRIVER_DATA_HEADER, topics } from '@hub/events';
import { driverDataKeyring, openPersonalFields, sealedKeyId, type PersonalObjectKind } from '@hub/registry';
import type { PartnerSimulator, ServiceProcess, TestStack } from '@hub/testing';
import { createPool, ensureDatabase, dropDatabase, migrate, postgresDriverDataKeys } from '@hub/store';
import { jsonLogs, repoRoot, sqlPool, startService, type SqlPool } from '@hub/testing';
import { join } from 'node:path';
import { until } from '../helpers.ts';
import { acknowledged, retryable, type Push, type PushKind } from './load.ts';

type Json = Record<string, unknown>;

export interface TopicRecord {
  readonly topic: string;
  readonly partition: number;
  readonly requestId: string | undefined;
  readonly ceId: string | undefined;
  readonly value: Json;
  /** Where and when (the producer's CreateTime, ms) the record is: to tell copies of one event apart. */
  readonly offset?: number;
  readonly timestamp?: number;
}

/** High watermark of every partition of a topic: "partition" -> next offset. */
export async function topicEnds(stack: TestStack, logical: string): Promise<Map<number, number>> {
  const admin = stack.eventLog.topicAdmin();
  try {
    const offsets = await admin.topicOffsets(stack.eventLog.physical(logical));
    return new Map(offsets.map((o) => [o.partition, Number(o.high)]));
  } finally {
    await admin.close();
  }
}

/** The topics whose events carry a driver's personal fields sealed (docs/decisions/0013-erasure-by-destroying-data-keys.md). */
const SEALED_KINDS: Readonly<Record<string, PersonalObjectKind>> = { [topics.sessions]: 'session', [topics.cdrs]: 'cdr', [topics.tokens]: 'token', [topics.commands]: 'command' };

/**
 * Every record of the topics, read from the beginning to the ends they have now; a value with sealed
 * personal fields is opened with the token's data key, as the hub's own consumers read it, so it can
 * be compared with what the partner sent.
 */
export async function readTopics(stack: TestStack, logical: readonly string[], timeoutMs = 60_000): Promise<TopicRecord[]> {
  const keys = postgresDriverDataKeys(stack.pool, driverDataKeyring(Buffer.from(stack.env()['HUB_SECRET_KEY'] ?? '', 'base64')));
  const kindOf = new Map(logical.flatMap((t) => (SEALED_KINDS[t] ? [[stack.eventLog.physical(t), SEALED_KINDS[t]] as const] : [])));
  const read = await stack.eventLog.readTopics(logical, { until: 'end', timeoutMs });
  if (!read.complete) throw new Error(`topics not read to their ends within ${timeoutMs} ms`);
  const records: TopicRecord[] = [];
  for (const { topic, partition, offset, timestamp, headers, value: raw } of read.records) {
    const header = (k: string) => (headers[k] === undefined ? undefined : String(headers[k]));
    let value = JSON.parse(raw?.toString() ?? 'null') as Json;
    const sealed = header(SEALED_DRIVER_DATA_HEADER);
    const kind = kindOf.get(topic);
    const keyId = sealedKeyId(sealed);
    if (kind && sealed && keyId) value = openPersonalFields(kind, value, sealed, await keys.keyById(keyId));
    records.push({ topic, partition, requestId: header('x-request-id'), ceId: header('ce_id'), value, offset: Number(offset), timestamp });
  }
  return records;
}

export interface KindFigures {
  kind: PushKind;
  sent: number;
  acknowledged: number;
  refused: number;
  other: number;
  /** Acknowledged pushes whose event is on Kafka with the body the CPO sent. */
  inKafka: number;
  /** Acknowledged pushes whose event is on Kafka more than once (a resend after a cut connection). */
  kafkaDuplicates: number;
  delivered: number;
  lost: number;
  duplicated: number;
}

/**
 * Sessions and CDRs: acknowledged, on Kafka as acknowledged, delivered, lost, duplicated at the eMSP
 * (a session or CDR received more than once). PATCHes: acknowledged and on Kafka (they are checked
 * at the read model, not at an eMSP).
 */
export function figures(pushes: readonly Push[], records: readonly TopicRecord[], emsp: PartnerSimulator): { rows: KindFigures[]; problems: string[] } {
  const byRequest = new Map<string, TopicRecord[]>();
  for (const r of records) if (r.requestId) byRequest.set(r.requestId, [...(byRequest.get(r.requestId) ?? []), r]);
  const received = new Map<string, number>();
  for (const r of emsp.received) received.set(`${r.kind}:${String(r.body['id'])}`, (received.get(`${r.kind}:${String(r.body['id'])}`) ?? 0) + 1);
  const problems: string[] = [];
  const rows = (['session', 'cdr', 'patch'] as const).map((kind) => {
    const mine = pushes.filter((p) => p.kind === kind);
    const acked = mine.filter(acknowledged);
    const f: KindFigures = { kind, sent: mine.length, acknowledged: acked.length, refused: mine.filter(retryable).length, other: 0, inKafka: 0, kafkaDuplicates: 0, delivered: 0, lost: 0, duplicated: 0 };
    f.other = f.sent - f.acknowledged - f.refused;
    for (const p of acked) {
      const found = byRequest.get(p.requestId) ?? [];
      if (found.some((r) => isDeepStrictEqual(r.value, p.body))) f.inKafka++;
      else {
        // Where the object is on Kafka at all (another request's record, e.g. the prober's relay of a CDR).
        const elsewhere = records.filter((r) => r.value['id'] === p.id && r.topic.endsWith(kind === 'cdr' ? 'cdrs.v1' : 'sessions.v1'));
        const seen = elsewhere.map((r) => `p${r.partition} request ${r.requestId ?? 'none'}`).join(', ') || 'nowhere';
        problems.push(`${kind} ${p.id} (request ${p.requestId}, sent at ${new Date(p.sentAt).toISOString().slice(11, 23)}, answered after ${p.answeredAt - p.sentAt} ms) acknowledged but ${found.length === 0 ? `not on Kafka (its id: ${seen})` : 'on Kafka with another body'}`);
      }
      if (found.length > 1) f.kafkaDuplicates += found.length - 1;
      if (found.length > 1 && !p.resent) problems.push(`${kind} ${p.id} on Kafka ${found.length} times from one request`);
      if (kind === 'patch') continue;
      const n = received.get(`${kind}:${p.id}`) ?? 0;
      if (n > 0) f.delivered++;
      else {
        f.lost++;
        problems.push(`${kind} ${p.id} acknowledged but never delivered to the eMSP`);
      }
      f.duplicated += Math.max(0, n - 1);
    }
    if (kind === 'patch') f.lost = f.acknowledged - f.inKafka;
    return f;
  });
  return { rows, problems };
}

/** How many times each CDR event (one ce_id: docs/decisions/0003-each-cdr-once.md) is in ocpi.cdrs.v1. */
export interface CdrCopies {
  /** Distinct ce_ids in the topic. */
  readonly cdrs: number;
  /** ce_ids held once, twice, three or more times. */
  readonly once: number;
  readonly twice: number;
  readonly more: number;
  /** The ce_ids held more than once with their counts (first few), for the notes. */
  readonly repeated: ReadonlyArray<readonly [string, number]>;
  /** Where the copies of those ce_ids are: partition, offset and CreateTime of each. */
  readonly whereRepeated: ReadonlyArray<string>;
}

export function cdrCopies(records: readonly TopicRecord[]): CdrCopies {
  const counts = new Map<string, number>();
  for (const r of records) if (r.topic.endsWith('cdrs.v1') && r.ceId) counts.set(r.ceId, (counts.get(r.ceId) ?? 0) + 1);
  const n = [...counts.values()];
  return {
    cdrs: counts.size,
    once: n.filter((c) => c === 1).length,
    twice: n.filter((c) => c === 2).length,
    more: n.filter((c) => c > 2).length,
    repeated: [...counts].filter(([, c]) => c > 1).slice(0, 5),
    whereRepeated: [...counts]
      .filter(([, c]) => c > 1)
      .slice(0, 10)
      .map(([id]) => `${id}: ${records.filter((r) => r.ceId === id && r.topic.endsWith('cdrs.v1')).map((r) => `p${r.partition}@${r.offset} ${r.timestamp === undefined ? '' : new Date(r.timestamp).toISOString().slice(11, 23)}`).join(' / ')}`),
  };
}

/** The line of the fault notes with the per-ce_id counts of ocpi.cdrs.v1. */
export const cdrCopiesLine = (c: CdrCopies): string =>
  `CDRs in ocpi.cdrs.v1 per ce_id: ${c.cdrs} ce_ids, ${c.once} once, ${c.twice} twice, ${c.more} three times or more${c.repeated.length > 0 ? ` (e.g. ${c.repeated.map(([id, k]) => `${id} x${k}`).join(', ')})` : ''}`;

/** Waits until the eMSP received every acknowledged session and CDR (bounded). */
export async function awaitDeliveries(pushes: readonly Push[], emsp: PartnerSimulator, timeoutMs: number): Promise<void> {
  const want = pushes.filter((p) => acknowledged(p) && p.kind !== 'patch').map((p) => `${p.kind}:${p.id}`);
  await until(
    'every acknowledged session and CDR at the eMSP',
    () => {
      const got = new Set(emsp.received.map((r) => `${r.kind}:${String(r.body['id'])}`));
      return want.every((k) => got.has(k));
    },
    timeoutMs,
  ).catch(() => undefined); // what is missing is counted as lost by figures()
}

export interface FaultWindow {
  readonly fault: string;
  readonly at: number;
  /** A kill: its time to recover runs to the next kill (a restart in between is part of the recovery). */
  readonly kill?: boolean;
}

/**
 * Per fault: the pushes sent until the next fault and their answers; for a kill, the time from the
 * kill to the first acknowledgement of a push sent after it, and to "recovered": the first
 * acknowledgement of a push sent after the last push that was refused before the next kill.
 */
export function faultRows(pushes: readonly Push[], faults: readonly FaultWindow[]): string[] {
  return faults.map((f, i) => {
    const end = faults[i + 1]?.at ?? Infinity;
    const window = pushes.filter((p) => p.sentAt >= f.at && p.sentAt < end);
    const refused = window.filter(retryable).length;
    const slowest = Math.max(0, ...window.map((p) => p.answeredAt - p.sentAt));
    let recovery = '| - | - ';
    if (f.kill) {
      const nextKill = faults.slice(i + 1).find((g) => g.kill)?.at ?? Infinity;
      const span = pushes.filter((p) => p.sentAt >= f.at && p.sentAt < nextKill);
      const s = (ms: number) => (Number.isFinite(ms) ? ((ms - f.at) / 1000).toFixed(1) : 'n/a');
      const firstAck = Math.min(...span.filter(acknowledged).map((p) => p.answeredAt));
      const lastFailure = Math.max(f.at, ...span.filter((p) => !acknowledged(p)).map((p) => p.sentAt));
      const recovered = Math.min(...span.filter((p) => acknowledged(p) && p.sentAt > lastFailure).map((p) => p.answeredAt));
      recovery = `| ${s(firstAck)} | ${s(recovered)} `;
    }
    return `| ${f.fault} | ${window.length} | ${window.filter(acknowledged).length} | ${refused} | ${window.length - window.filter(acknowledged).length - refused} ${recovery}| ${(slowest / 1000).toFixed(1)} |`;
  });
}

/** Prints the fault table (for the issue note) and returns its lines. */
export function printFaultTable(title: string, rows: readonly KindFigures[], faults: readonly string[], notes: readonly string[] = []): string {
  const lines = [
    `fault table: ${title}`,
    '| fault | pushes sent until the next | acknowledged | refused 503 | other | first ack after the kill (s) | recovered after the kill (s) | slowest answer (s) |',
    '|---|---|---|---|---|---|---|---|',
    ...faults,
    '',
    '| push | sent | acknowledged | refused 503 | other | on Kafka as acknowledged | delivered | lost | duplicated at eMSP | duplicated on Kafka |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.kind} | ${r.sent} | ${r.acknowledged} | ${r.refused} | ${r.other} | ${r.inKafka} | ${r.kind === 'patch' ? 'n/a' : r.delivered} | ${r.lost} | ${r.kind === 'patch' ? 'n/a' : r.duplicated} | ${r.kafkaDuplicates} |`),
    ...notes,
  ];
  const text = lines.join('\n');
  process.stdout.write(`\n${text}\n\n`);
  return text;
}

/** The active generation's locations and rejects, as comparable text (no wall-clock columns). */
export async function readModelRows(pool: SqlPool): Promise<{ locations: string[]; rejects: string[] }> {
  const locations = await pool.query<{ row: string }>(
    `select json_build_array(country_code, party_id, id, last_updated, created_at, document::text)::text as row from locations
     where generation = (select active from read_model_generations where model = 'locations') order by country_code, party_id, id`,
  );
  const rejects = await pool.query<{ row: string }>(
    `select json_build_array(partition, "offset", subject, event_type, reason)::text as row from projection_rejects
     where model = 'locations' and generation = (select active from read_model_generations where model = 'locations') order by partition, "offset"`,
  );
  return { locations: locations.rows.map((r) => r.row), rejects: rejects.rows.map((r) => r.row) };
}

/**
 * Waits until the projector of this database has applied the locations topic up to its current ends.
 * On a timeout the error names each partition still behind and ends with `explain()` (the projectors'
 * warnings): a stalled projector in CI leaves nothing else to read.
 */
export async function awaitProjected(stack: TestStack, pool: SqlPool, timeoutMs: number, explain: () => string = () => ''): Promise<void> {
  const ends = await topicEnds(stack, topics.locations);
  const behind = async (): Promise<string[]> => {
    const { rows } = await pool.query<{ partition: number; next_offset: string }>(
      `select partition, next_offset from projection_offsets where model = 'locations' and generation = (select active from read_model_generations where model = 'locations')`,
    );
    return [...ends]
      .map(([p, end]) => ({ p, end, at: Number(rows.find((r) => r.partition === p)?.next_offset ?? 0) }))
      .filter(({ end, at }) => end !== 0 && at < end)
      .map(({ p, end, at }) => `partition ${p} at ${at} of ${end}`);
  };
  try {
    await until('the projector at the end of the locations topic', async () => (await behind()).length === 0, timeoutMs);
  } catch (e) {
    throw new Error(`${(e as Error).message}: ${(await behind()).join(', ')}\n${explain()}`, { cause: e });
  }
}

/** A service's warnings, errors and consumer restarts (logged as info), one per line, its last `max`. */
export function warnings(service: ServiceProcess, max = 40): string {
  return jsonLogs(service)
    .filter((l) => l['level'] === 'warn' || l['level'] === 'error' || /crash|restart|rejoin|rebalanc/i.test(String(l['message'])))
    .slice(-max)
    .map((l) => `${service.name} ${JSON.stringify(l)}`)
    .join('\n');
}

/**
 * A clean replay: a projector of its own into a fresh database, from the beginning of the topics
 * (PROJECTOR_START_FROM=history: the whole history, so its rejects are those of the live projector,
 * and it leaves the deployment's snapshot alone).
 */
export async function replayReadModel(stack: TestStack, env: Record<string, string>): Promise<{ locations: string[]; rejects: string[] }> {
  const url = new URL(stack.databaseUrl);
  url.pathname = `${url.pathname}_replay`;
  await ensureDatabase(url.toString());
  const pool = sqlPool(createPool(url.toString(), { max: 2, application: 'cluster-replay', onIdleError: () => undefined }));
  try {
    await migrate(pool, join(repoRoot, 'infra', 'migrations'));
    const projector = await startService('projector', { ...env, DATABASE_URL: url.toString(), PROJECTOR_GROUP_ID: 'projector-replay', PROJECTOR_START_FROM: 'history', OPERATOR_PORT: '0' }, /projector running/, 60_000);
    try {
      await awaitProjected(stack, pool, 90_000);
      return await readModelRows(pool);
    } finally {
      await projector.stop();
    }
  } finally {
    await pool.end();
    await dropDatabase(url.toString()).catch(() => undefined);
  }
}

/** Sessions and CDRs the eMSP received more than once, with when (seconds after t0), for the notes. */
export function duplicateDetail(emsp: PartnerSimulator, t0: number, limit = 12): string {
  const times = new Map<string, number[]>();
  for (const r of emsp.received) {
    const k = `${r.kind} ${String(r.body['id'])}`;
    times.set(k, [...(times.get(k) ?? []), performance.timeOrigin + r.at - t0]);
  }
  const dups = [...times].filter(([, t]) => t.length > 1);
  const shown = dups.slice(0, limit).map(([k, t]) => `${k} at ${t.map((x) => `+${(x / 1000).toFixed(1)}`).join('/')} s`);
  return `duplicates at the eMSP: ${dups.length}${shown.length > 0 ? ` (${shown.join('; ')}${dups.length > limit ? '; …' : ''})` : ''}`;
}

export interface DuplicateCauses {
  readonly total: number;
  /** A delivery attempt failed (timed out) after the eMSP had recorded it: retried, at least once. */
  readonly afterFailedAttempt: number;
  /** The CPO's push was sent twice (resent after no answer) and is on Kafka twice. */
  readonly pushedTwice: number;
  /** Neither: only a dispatcher killed with deliveries in flight explains these. */
  readonly otherwise: number;
}

/** Why each session or CDR the eMSP received more than once was sent again (dispatcher log lines). */
export function duplicateCauses(emsp: PartnerSimulator, pushes: readonly Push[], dispatcherLogs: ReadonlyArray<Record<string, unknown>>): DuplicateCauses {
  const counts = new Map<string, number>();
  for (const r of emsp.received) counts.set(`${r.kind}:${String(r.body['id'])}`, (counts.get(`${r.kind}:${String(r.body['id'])}`) ?? 0) + 1);
  const failed = new Set(
    dispatcherLogs
      .filter((l) => /^delivery failed|recording it failed/.test(String(l['message'])))
      .map((l) => `${String(l['kind'])}:${String(l['objectId']).split('/').at(-1) ?? ''}`),
  );
  const resent = new Set(pushes.filter((p) => p.resent).map((p) => `${p.kind}:${p.id}`));
  let total = 0;
  let afterFailedAttempt = 0;
  let pushedTwice = 0;
  for (const [key, n] of counts) {
    if (n < 2) continue;
    total += n - 1;
    if (failed.has(key)) afterFailedAttempt += n - 1;
    else if (resent.has(key)) pushedTwice += n - 1;
  }
  return { total, afterFailedAttempt, pushedTwice, otherwise: total - afterFailedAttempt - pushedTwice };
}
