// A delivery backlog at scale: sessions and CDRs queued for 10 eMSPs, one of them
// down, seeded straight into the deliveries table with SQL (generate_series) up to each size, then
//   1. the claim query (claimDue, as the dispatcher's workers call it: 64 slots, 16 per eMSP) and
//      the recording of the deliveries (delivered(), batched), p50/p95 at each size: they must not grow;
//   2. the drain rate once the nine healthy eMSPs answer (the dispatcher process against the full
//      backlog, for a bounded time), the dispatcher's RSS while it holds the backlog;
//   3. CDRs end to end with every eMSP answering at once, on an emptied queue, after a warm-up of the
//      same kind (the ingress is started for this phase): POST answered by the
//      ingress -> received by the eMSP, accepted/s and delivered/s (issue target >= 1,000/s), and what a
//      CDR costs: CPU per process, Postgres commits, rows written and WAL bytes.
// Run: npm run bench -- backlog [rows=1000000] [drain seconds=30] [cdrs=10000] [CDR warm-up=10000]
// Bounded: about 5 minutes (seeding 1M rows 1-2 min, 50 claim rounds per size, 30 s of drain, the CDR
// phase, after its warm-up, until every CDR arrived or 2 minutes passed).
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { setRoutingRule } from '@hub/registry';
import { postgresDeliveryQueue, postgresRegistryStore } from '@hub/store';
import { call, createTestStack, repoRoot, startPartnerSimulator } from '@hub/testing';
import { benchPlatform, cpuSeconds, percentile, postgresCpuSeconds, rssMiB, startNode } from './load.ts';
import { printFigures, type Figure } from './figures.ts';

type Json = Record<string, unknown>;
const rows = Number(process.argv[2] ?? 1_000_000);
const drainSeconds = Number(process.argv[3] ?? 30);
const cdrCount = Number(process.argv[4] ?? 10_000);
const cdrWarmup = Number(process.argv[5] ?? 10_000);
const sizes = [10_000, 100_000, rows].filter((s, i, all) => s <= rows && all.indexOf(s) === i);
const out = (line: string) => process.stdout.write(`${line}\n`);
const examples = join(repoRoot, '..', 'shared', 'ocpi-2.2.1', 'examples');
const sessionTemplate = JSON.parse(readFileSync(join(examples, 'session_example_1_simple_start.json'), 'utf8')) as Json;
const cdrTemplate = JSON.parse(readFileSync(join(examples, 'cdr_example.json'), 'utf8')) as Json;

const stack = await createTestStack('bench_backlog');
const env = stack.env({ HUB_PORT: '0', LOG_LEVEL: 'warn', ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', DELIVERY_TIMEOUT_MS: '2000' });
const deps = { store: postgresRegistryStore(stack.pool), source: 'bench', actor: 'bench' };
const cpo = { countryCode: 'NL', partyId: 'STK' };
const emsps = await Promise.all(Array.from({ length: 10 }, async (_, i) => ({ party: { countryCode: 'DE', partyId: `EM${String.fromCharCode(65 + i)}` }, sim: await startPartnerSimulator() })));
const down = emsps[9] as (typeof emsps)[number];
const cpoToken = await benchPlatform(stack, env['HUB_SECRET_KEY'] ?? '', cpo, 'CPO');
for (const e of emsps) {
  await benchPlatform(stack, env['HUB_SECRET_KEY'] ?? '', e.party, 'EMSP', e.sim);
  await setRoutingRule(deps, { emsp: e.party, cpo, enabled: true });
}
const queue = postgresDeliveryQueue(stack.pool);
const brokerPid = Number(process.env['TEST_BROKER_PID'] ?? 0);

/**
 * What Postgres did, for the CDR phase: commits and rollbacks of the bench database, rows written per
 * table (HOT updates apart: they write no index entry), and WAL (records, full-page images, bytes;
 * the WAL is the whole server's, other databases' writes included). Statistics reach the shared
 * counters when a backend has been idle for a while (up to 10 s in PostgreSQL 15): read them after
 * a pause.
 */
/**
 * BENCH_PG_SAMPLE=1: which statements Postgres is busy with, sampled from pg_stat_activity every 20 ms
 * during the CDR phase (no extension needed): a statement's share of the samples is its share of the
 * time the hub's sessions spend in Postgres (executing, or waiting on a lock or the WAL flush).
 */
function sampleStatements(): { stop(): Map<string, number> } {
  const counts = new Map<string, number>();
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void stack.pool
      .query<{ q: string; w: string | null }>(
        "select regexp_replace(left(query, 400), '\\s+', ' ', 'g') as q, wait_event as w from pg_stat_activity where datname = current_database() and state = 'active' and pid <> pg_backend_pid()",
      )
      .then(({ rows }) => {
        for (const r of rows) {
          const key = `${r.q.replace(/\$\d+/g, '$').slice(0, 110)}${r.w ? ` [${r.w}]` : ''}`;
          counts.set(key, (counts.get(key) ?? 0) + 1);
        }
      })
      .catch(() => undefined)
      .finally(() => (busy = false));
  }, 20);
  return { stop: () => (clearInterval(timer), counts) };
}

/**
 * CPU seconds of the bench database's Postgres sessions (the hub's and this process's connections),
 * by pid: unlike postgresCpuSeconds it leaves out other databases' sessions on a shared host (not the
 * server's own processes: WAL writer, checkpointer).
 */
async function sessionCpu(): Promise<Map<number, number>> {
  const { rows } = await stack.pool.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database()');
  const out = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      out.set(pid, cpuSeconds(pid));
    } catch {
      // Ended meanwhile.
    }
  }
  return out;
}
const sessionCpuSince = (before: Map<number, number>, after: Map<number, number>) => [...after].reduce((sum, [pid, s]) => sum + s - (before.get(pid) ?? 0), 0);

async function postgresCounters(): Promise<Record<string, number>> {
  const { rows } = await stack.pool.query<Record<string, string>>(
    `select d.xact_commit as commits, d.xact_rollback as rollbacks, pg_current_wal_lsn() - '0/0'::pg_lsn as wal_lsn,
            w.wal_records, w.wal_fpi, w.wal_bytes,
            (select coalesce(sum(n_tup_ins), 0) from pg_stat_user_tables where relname = 'cdrs') as cdrs_inserted,
            (select coalesce(sum(n_tup_upd), 0) from pg_stat_user_tables where relname = 'cdrs') as cdrs_updated,
            (select coalesce(sum(n_tup_ins), 0) from pg_stat_user_tables where relname = 'deliveries') as deliveries_inserted,
            (select coalesce(sum(n_tup_upd), 0) from pg_stat_user_tables where relname = 'deliveries') as deliveries_updated,
            (select coalesce(sum(n_tup_hot_upd), 0) from pg_stat_user_tables where relname = 'deliveries') as deliveries_hot_updated,
            (select coalesce(sum(n_tup_ins + n_tup_upd), 0) from pg_stat_user_tables where relname not in ('cdrs', 'deliveries')) as other_rows_written
       from pg_stat_database d, pg_stat_wal w where d.datname = current_database()`,
  );
  return Object.fromEntries(Object.entries(rows[0] ?? {}).map(([k, v]) => [k, Number(v)]));
}

/**
 * Rows [from, to): even ones sessions, odd ones CDRs, eMSP i % 10. The healthy eMSPs' rows are due
 * (they were down and are back); the down eMSP's wait for their next retry, within the next hour.
 */
async function seed(from: number, to: number): Promise<void> {
  for (let start = from; start < to; start += 100_000) {
    await stack.pool.query(
      `insert into deliveries (kind, emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id, object_id, source_partition, source_offset,
                               payload, event_time, state, next_attempt_at, source_time)
       select case when i % 2 = 0 then 'session' else 'cdr' end, 'DE', 'EM' || chr(65 + (i % 10)::int), 'NL', 'STK', 'BL' || i, 0, i,
              jsonb_set(case when i % 2 = 0 then $3::jsonb else $4::jsonb end, '{id}', to_jsonb('BL' || i)), now(), 'pending',
              case when i % 10 = 9 then now() + (i % 3600) * interval '1 second' else now() - interval '1 day' + i * interval '1 millisecond' end, now()
         from generate_series($1::bigint, $2::bigint - 1) as i`,
      [start, Math.min(to, start + 100_000), JSON.stringify({ ...sessionTemplate, country_code: 'NL', party_id: 'STK' }), JSON.stringify({ ...cdrTemplate, country_code: 'NL', party_id: 'STK' })],
    );
  }
  await stack.pool.query('vacuum (analyze) deliveries');
}

const table: Array<Record<string, number>> = [];
const figures: Record<string, Figure> = {};
let dispatcher: Awaited<ReturnType<typeof startNode>> | undefined;
let ingress: Awaited<ReturnType<typeof startNode>> | undefined;
try {
  let seeded = 0;
  for (const size of sizes) {
    const t0 = Date.now();
    await seed(seeded, size);
    seeded = size;
    out(`${size}: seeded in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const claimTimes: number[] = [];
    const recordTimes: number[] = [];
    // As the dispatcher's workers do: claim the free slots, deliver, record the completions (one
    // batched UPDATE), claim again; the claim walks past what the previous rounds left behind.
    for (let i = 0; i < 50; i++) {
      const started = performance.now();
      const claimed = await queue.claimDue(64, new Map(), 16, 30_000);
      claimTimes.push(performance.now() - started);
      if (claimed.length === 0) throw new Error('nothing claimed');
      const at = performance.now();
      await Promise.all(claimed.map((d) => queue.delivered(d.id, d.offset)));
      recordTimes.push((performance.now() - at) / claimed.length);
    }
    const row = { rows: size, claim_p50_ms: percentile(claimTimes, 50), claim_p95_ms: percentile(claimTimes, 95), record_p95_ms: percentile(recordTimes, 95) };
    table.push(row);
    out(`${size}: claim (64 slots) p50 ${row.claim_p50_ms.toFixed(2)} ms, p95 ${row.claim_p95_ms.toFixed(2)} ms; recording a delivery p95 ${row.record_p95_ms.toFixed(3)} ms each (batched; 50 rounds of 64)`);
    for (const [k, v] of Object.entries(row)) if (k !== 'rows') figures[`${k}_at_${size}`] = v;
  }
  const first = table[0];
  const last = table.at(-1);
  if (first && last) figures[`claim_p95_ratio_${last.rows}_to_${first.rows}`] = (last['claim_p95_ms'] ?? 0) / (first['claim_p95_ms'] ?? 1);

  // 2. Drain: the healthy eMSPs answer, the down one hangs (its rows are not due yet anyway).
  down.sim.receiverMode = 'hang';
  dispatcher = await startNode(join(repoRoot, 'services', 'dispatcher', 'src', 'main.ts'), [], { ...env, LOG_LEVEL: 'info' }, /dispatcher running/);
  // Counted as the eMSPs receive them (the simulators' lists are emptied as they are counted, so
  // this process holds no backlog); the window starts at the first receipt, after the consumer start.
  let receivedSoFar = 0;
  const count = () => {
    for (const e of emsps) {
      receivedSoFar += e.sim.received.length;
      e.sim.received.length = 0;
    }
    return receivedSoFar;
  };
  const firstBy = Date.now() + 60_000;
  while (count() === 0 && Date.now() < firstBy) await new Promise((r) => setTimeout(r, 50));
  const base = count();
  const drainStart = Date.now();
  const drainCpu = { dispatcher: cpuSeconds(dispatcher.child.pid ?? 0), postgres: postgresCpuSeconds(), bench: process.cpuUsage() };
  let dispatcherRss = 0;
  while (Date.now() < drainStart + drainSeconds * 1000) {
    dispatcherRss = Math.max(dispatcherRss, rssMiB(dispatcher.child.pid));
    count();
    await new Promise((r) => setTimeout(r, 250));
  }
  const drained = count() - base;
  const drainRate = drained / ((Date.now() - drainStart) / 1000);
  // Where a delivery's time goes: CPU per delivery of the dispatcher, Postgres, and this process (the eMSP simulators).
  const perDelivery = (seconds: number) => (drained > 0 ? (seconds * 1e6) / drained : Number.NaN);
  const drainBench = process.cpuUsage(drainCpu.bench);
  const drainCpuUs = {
    dispatcher: perDelivery(cpuSeconds(dispatcher.child.pid ?? 0) - drainCpu.dispatcher),
    postgres: perDelivery(postgresCpuSeconds() - drainCpu.postgres),
    simulators: perDelivery((drainBench.user + drainBench.system) / 1e6),
  };
  out(`drain: ${drained} of ${rows} delivered in the ${drainSeconds} s after the first receipt (${drainRate.toFixed(0)}/s); dispatcher RSS max ${dispatcherRss.toFixed(0)} MiB`);
  out(`drain CPU per delivery: dispatcher ${drainCpuUs.dispatcher.toFixed(0)} µs, Postgres ${drainCpuUs.postgres.toFixed(0)} µs, eMSP simulators ${drainCpuUs.simulators.toFixed(0)} µs`);
  Object.assign(figures, { drain_dispatcher_cpu_us_per_delivery: drainCpuUs.dispatcher, drain_postgres_cpu_us_per_delivery: drainCpuUs.postgres });
  Object.assign(figures, { drain_per_s: drainRate, drain_seconds: drainSeconds, dispatcher_rss_max_mib: dispatcherRss });

  // 3. CDRs end to end on an emptied queue, every eMSP answering at once.
  await stack.pool.query('truncate deliveries');
  down.sim.receiverMode = 'ok';
  for (const e of emsps) e.sim.received.length = 0;
  ingress = await startNode(join(repoRoot, 'services', 'ingress', 'src', 'main.ts'), [], { ...env, LOG_LEVEL: 'info' }, /ingress listening/);
  const hub = `http://127.0.0.1:${/"port":(\d+)/.exec(ingress.line)?.[1]}`;
  let ingressRss = 0;
  const sampler = setInterval(() => {
    ingressRss = Math.max(ingressRss, rssMiB(ingress?.child.pid));
    dispatcherRss = Math.max(dispatcherRss, rssMiB(dispatcher?.child.pid));
  }, 200);
  const received = () => emsps.reduce((s, e) => s + e.sim.received.filter((r) => r.kind === 'cdr').length, 0);
  /** Posts `count` CDRs (ids `prefix`-n) from 50 posters, then waits until the eMSPs received them (at most 2 minutes). */
  const postCdrs = async (prefix: string, count: number) => {
    let next = 0;
    const before = received();
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (next < count) {
          const n = next++;
          const emsp = (emsps[n % emsps.length] as (typeof emsps)[number]).party;
          const body = { ...cdrTemplate, country_code: 'NL', party_id: 'STK', id: `${prefix}-${n}`, cdr_token: { ...(cdrTemplate['cdr_token'] as Json), country_code: emsp.countryCode, party_id: emsp.partyId } };
          const r = await call(hub, 'POST', '/ocpi/2.2.1/cdrs', { token: cpoToken, body });
          if (r.body.status_code !== 1000) throw new Error(r.text);
        }
      }),
    );
    const ingested = performance.now();
    while (received() - before < count && performance.now() - ingested < 120_000) await new Promise((r) => setTimeout(r, 50));
    return { started, ingested, delivered: performance.now(), received: received() - before };
  };
  // Steady state, as in production (and as location-patch measures it): the ingress was just started
  // and the broker has appended nothing yet, so their JITs compile the CDR path during the first
  // seconds. The warm-up's own rate is printed too: what a cold hub does.
  if (cdrWarmup > 0) {
    const warm = await postCdrs('CDR-WARM', cdrWarmup);
    const warmRate = warm.received / ((warm.delivered - warm.started) / 1000);
    out(`CDR warm-up: ${cdrWarmup} posted at ${(cdrWarmup / ((warm.ingested - warm.started) / 1000)).toFixed(0)}/s accepted, ${warmRate.toFixed(0)}/s end to end (a cold ingress and broker)`);
    figures['cdr_warmup_end_to_end_per_s'] = warmRate;
  }
  // Statistics of the setup (the truncate, the ingress's start, the warm-up) flushed first, then the phase's.
  await new Promise((r) => setTimeout(r, 11_000));
  const pgBefore = await postgresCounters();
  const sessionsBefore = await sessionCpu();
  const cdrCpu = { ingress: cpuSeconds(ingress.child.pid ?? 0), dispatcher: cpuSeconds(dispatcher.child.pid ?? 0), postgres: postgresCpuSeconds(), broker: brokerPid > 0 ? cpuSeconds(brokerPid) : Number.NaN, bench: process.cpuUsage() };
  const statements = process.env['BENCH_PG_SAMPLE'] ? sampleStatements() : undefined;
  const { started, ingested, delivered, received: cdrsReceived } = await postCdrs('CDR', cdrCount);
  clearInterval(sampler);
  const sampled = statements?.stop();
  if (sampled) {
    const all = [...sampled.values()].reduce((a, b) => a + b, 0);
    out(`Postgres statements by share of ${all} samples of active sessions:`);
    for (const [q, n] of [...sampled].sort((a, b) => b[1] - a[1]).slice(0, 12)) out(`  ${((100 * n) / all).toFixed(1).padStart(5)}%  ${q}`);
  }
  const perCdr = (seconds: number) => (seconds * 1e6) / cdrCount;
  const benchCpu = process.cpuUsage(cdrCpu.bench);
  const cdrCpuUs = {
    ingress: perCdr(cpuSeconds(ingress.child.pid ?? 0) - cdrCpu.ingress),
    dispatcher: perCdr(cpuSeconds(dispatcher.child.pid ?? 0) - cdrCpu.dispatcher),
    postgres: perCdr(postgresCpuSeconds() - cdrCpu.postgres),
    postgresSessions: perCdr(sessionCpuSince(sessionsBefore, await sessionCpu())),
    broker: brokerPid > 0 ? perCdr(cpuSeconds(brokerPid) - cdrCpu.broker) : Number.NaN,
    bench: perCdr((benchCpu.user + benchCpu.system) / 1e6),
  };
  out(
    `CDR CPU per CDR: ingress ${cdrCpuUs.ingress.toFixed(0)} µs, dispatcher ${cdrCpuUs.dispatcher.toFixed(0)} µs, Postgres ${cdrCpuUs.postgres.toFixed(0)} µs (all Postgres processes on the host; the bench database's sessions ${cdrCpuUs.postgresSessions.toFixed(0)} µs), ` +
      `Kafka broker ${cdrCpuUs.broker.toFixed(0)} µs, bench process (posters, eMSP simulators) ${cdrCpuUs.bench.toFixed(0)} µs`,
  );
  Object.assign(figures, { cdr_ingress_cpu_us: cdrCpuUs.ingress, cdr_dispatcher_cpu_us: cdrCpuUs.dispatcher, cdr_postgres_cpu_us: cdrCpuUs.postgres, cdr_postgres_sessions_cpu_us: cdrCpuUs.postgresSessions, cdr_broker_cpu_us: cdrCpuUs.broker, cdr_bench_cpu_us: cdrCpuUs.bench });
  await new Promise((r) => setTimeout(r, 11_000));
  const pgAfter = await postgresCounters();
  const pg = Object.fromEntries(Object.keys(pgAfter).map((k) => [k, ((pgAfter[k] ?? 0) - (pgBefore[k] ?? 0)) / cdrCount]));
  out(
    `Postgres per CDR: ${pg['commits']?.toFixed(2)} commits (${pg['rollbacks']?.toFixed(3)} rollbacks), WAL ${pg['wal_lsn']?.toFixed(0)} bytes (${pg['wal_records']?.toFixed(1)} records, ${pg['wal_fpi']?.toFixed(2)} full-page images; the server's), ` +
      `cdrs rows inserted ${pg['cdrs_inserted']?.toFixed(2)} updated ${pg['cdrs_updated']?.toFixed(2)}, deliveries inserted ${pg['deliveries_inserted']?.toFixed(2)} updated ${pg['deliveries_updated']?.toFixed(2)} (HOT ${pg['deliveries_hot_updated']?.toFixed(2)}), other rows ${pg['other_rows_written']?.toFixed(2)}`,
  );
  for (const [k, v] of Object.entries(pg)) figures[`cdr_pg_${k}`] = v;
  const accepted = cdrCount / ((ingested - started) / 1000);
  const endToEnd = cdrsReceived / ((delivered - started) / 1000);
  out(`CDRs: ${cdrCount} posted over 10 eMSPs at ${accepted.toFixed(0)}/s accepted; ${cdrsReceived} received, ${endToEnd.toFixed(0)}/s end to end; RSS max ingress ${ingressRss.toFixed(0)} MiB, dispatcher ${dispatcherRss.toFixed(0)} MiB`);
  Object.assign(figures, { cdrs_accepted_per_s: accepted, cdrs_end_to_end_per_s: endToEnd, cdrs_received: cdrsReceived, cdrs_posted: cdrCount, ingress_rss_max_mib: ingressRss, dispatcher_rss_max_mib: dispatcherRss });
} finally {
  ingress?.child.kill('SIGTERM');
  dispatcher?.child.kill('SIGTERM');
  for (const e of emsps) await e.sim.close();
  await new Promise((r) => setTimeout(r, 1000));
  await stack.cleanup();
}
out(`(${new Date().toISOString()}, node ${process.version}, 2 cores)`);
printFigures(figures);
process.exit(0);
