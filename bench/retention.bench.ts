// A simulated stretch of production against retention (docs/decisions/0006-retention.md): each
// simulated day adds a day's delivered sessions, CDRs and command results, finished commands,
// resolved quarantine rows and superseded events, stamped with that day's time, then runs the pruner
// with "now" at the end of that day (time made to pass, not waited for). It prints the row counts and
// table sizes per day (after the vacuum autovacuum would run in that day), which level off once the
// days pass the retention, and the claim p95 over a
// standing pending backlog, which must not grow with the delivered history.
// Run: npm run bench -- retention [days=60] [deliveries per day=20000]
// Bounded: about 2 minutes at the defaults (1.2M delivery rows written, at most 600k kept).
import { DEFAULT_RETENTION, postgresDeliveryQueue, pruneExpired } from '@hub/store';
import { createTestStack } from '@hub/testing';
import { printFigures } from './figures.ts';
import { percentile } from './load.ts';

const days = Number(process.argv[2] ?? 60);
const perDay = Number(process.argv[3] ?? 20_000);
const DAY = 86_400_000;
const out = (line: string) => process.stdout.write(`${line}\n`);

const stack = await createTestStack('bench_retention');
const pool = stack.pool;
const queue = postgresDeliveryQueue(pool);
const start = Date.now() - days * DAY;

// A standing backlog the claims run against: 10,000 pending rows for 10 eMSPs, due now.
await pool.query(
  `insert into deliveries (kind, emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id, object_id, source_partition, source_offset, payload, event_time, state)
   select 'session', 'DE', 'EM' || (g % 10), 'NL', 'STK', 'pending-' || g, 0, g, '{"id":"x"}', now(), 'pending' from generate_series(1, 10000) g`,
);

const tables = ['deliveries', 'commands', 'consumer_quarantine', 'projection_rejects'] as const;
async function sizes(): Promise<Record<string, { rows: number; mib: number }>> {
  const result: Record<string, { rows: number; mib: number }> = {};
  for (const t of tables) {
    const { rows } = await pool.query<{ n: string; bytes: string }>(`select (select count(*) from ${t}) as n, pg_total_relation_size('${t}') as bytes`);
    result[t] = { rows: Number(rows[0]?.n ?? 0), mib: Number(rows[0]?.bytes ?? 0) / 1048576 };
  }
  return result;
}
async function claimP95(): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 30; i++) {
    const t0 = performance.now();
    // Claimed for 1 ms: the rows are due again at once, so every round claims from the same backlog.
    await queue.claimDue(64, new Map(), 16, 1);
    times.push(performance.now() - t0);
  }
  return percentile(times, 0.95);
}

out(`retention: ${days} simulated days, ${perDay} delivered rows a day (sessions, CDRs, command results), retention ${DEFAULT_RETENTION.deliveredMs / DAY} days`);
out('day | deliveries rows | MiB | commands | quarantine | rejects | pruned that day | claim p95 ms');
let last: Awaited<ReturnType<typeof sizes>> = await sizes();
let lastClaim = 0;
const firstClaim = await claimP95();
for (let day = 0; day < days; day++) {
  const at = new Date(start + day * DAY);
  await pool.query(
    `insert into deliveries (kind, emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id, object_id, source_partition, source_offset, payload, event_time, state, delivered_at, created_at, updated_at)
     select (array['session', 'cdr', 'command_result'])[1 + g % 3], 'DE', 'EM' || (g % 10), 'NL', 'STK', 'd' || $2 || '-' || g, 0, g,
            '{"id":"x","kwh":12.5,"auth_method":"WHITELIST","currency":"EUR"}', $1, 'delivered', $1, $1, $1
       from generate_series(1, $3::int) g`,
    [at, day, perDay],
  );
  await pool.query(
    `insert into commands (id, command, emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id, response_url, state, created_at, updated_at)
     select gen_random_uuid(), 'START_SESSION', 'DE', 'EMA', 'NL', 'STK', 'https://emsp.example.com/r', 'result', $1, $1 from generate_series(1, $2::int)`,
    [at, Math.round(perDay / 20)],
  );
  await pool.query(
    `insert into consumer_quarantine (consumer_group, topic, partition, "offset", failure_kind, reason, state, first_seen_at, last_seen_at, resolved_at)
     select 'projector', 'day-' || $2, 0, g, 'record', 'r', 'discarded', $1, $1, $1 from generate_series(1, 20) g`,
    [at, day],
  );
  await pool.query(
    `insert into projection_rejects (model, generation, partition, "offset", subject, event_type, reason, at)
     select 'locations', 1, $2, g, 'NL/STK/L' || g, 'ocpi.locations.evse-patched.v1', 'superseded: older', $1 from generate_series(1, $3::int) g`,
    [at, day, Math.round(perDay / 20)],
  );
  const pruned = await pruneExpired(pool, DEFAULT_RETENTION, { now: new Date(at.getTime() + DAY), maxRowsPerTable: 10 * perDay });
  // What autovacuum does in a real day (migration 022 sets it to run after 2% dead rows): the bench's
  // day lasts two seconds, so it runs it itself, or the freed space would not be reused yet.
  await pool.query('vacuum deliveries, commands, consumer_quarantine, projection_rejects');
  last = await sizes();
  lastClaim = await claimP95();
  const d = last['deliveries'];
  out(
    `${String(day + 1).padStart(3)} | ${String(d?.rows).padStart(15)} | ${d?.mib.toFixed(0).padStart(3)} | ${String(last['commands']?.rows).padStart(8)} | ${String(last['consumer_quarantine']?.rows).padStart(10)} | ${String(last['projection_rejects']?.rows).padStart(7)} | ${String(Object.values(pruned).reduce((a, b) => a + b, 0)).padStart(15)} | ${lastClaim.toFixed(2)}`,
  );
}
const retainedDays = DEFAULT_RETENTION.deliveredMs / DAY;
printFigures({
  days,
  delivered_rows_per_day: perDay,
  deliveries_rows_end: last['deliveries']?.rows ?? 0,
  deliveries_rows_bound: 10_000 + perDay * (retainedDays + 1),
  deliveries_mib_end: last['deliveries']?.mib ?? 0,
  commands_rows_end: last['commands']?.rows ?? 0,
  quarantine_rows_end: last['consumer_quarantine']?.rows ?? 0,
  projection_rejects_rows_end: last['projection_rejects']?.rows ?? 0,
  claim_p95_ms_first_day: firstClaim,
  claim_p95_ms_last_day: lastClaim,
});
await stack.cleanup();
