// Locations at scale (benchmarks), on the real stack: a projector process builds the read
// model of N locations appended to Kafka, then
//   - projection throughput while filling the read model,
//   - a page at random offsets (limit 100): p50/p95,
//   - a full sync by Link following (limit = server maximum),
//   - projection lag (PATCH answered -> visible in the read model) at a steady rate,
//   - an incremental sync (date_from) of what the lag phase changed: pages and Link following,
//   - rebuild by replay (hubctl readmodel rebuild logic): events/s.
// Run: npm run bench -- locations [locations=50000] [lag rate/s=1000] [lag seconds=20]
import { join } from 'node:path';
import { locationEventTypes, newEvent, topics } from '@hub/events';
import { objectKey, pathSubject } from '@hub/modules';
import { rebuildReadModel } from '@hub/hubctl';
import { postgresReadModelStore } from '@hub/store';
import { call, createTestStack, repoRoot } from '@hub/testing';
import { readFileSync } from 'node:fs';
import { cpuSeconds, followLinks, onboardForBench, percentile, postgresCpuSeconds, profiled, startNode } from './load.ts';
import { printFigures, type Figure } from './figures.ts';

const count = Number(process.argv[2] ?? 50_000);
const lagRate = Number(process.argv[3] ?? 1000);
const lagSeconds = Number(process.argv[4] ?? 20);
const stack = await createTestStack('bench_locations');
const template = JSON.parse(readFileSync(join(repoRoot, '..', 'shared', 'ocpi-2.2.1', 'examples', 'location_example.json'), 'utf8')) as Record<string, unknown>;
const out = (line: string) => process.stdout.write(`${line}\n`);

// The list rate limit (200/min) would cut the measurement short; it has its own test.
const ingressEnv = stack.env({
  HUB_PORT: '0',
  ACCESS_LOG: 'errors',
  LOG_LEVEL: 'info',
  PAGE_LIMIT_MAX: '1000',
  RATE_LIMIT_LOCATION_LISTS: '1000000',
  NODE_OPTIONS: process.env['BENCH_NODE_OPTIONS'] ?? '',
});
const ingress = await startNode(join(repoRoot, 'services', 'ingress', 'src', 'main.ts'), [], ingressEnv, /ingress listening/);
const hub = `http://127.0.0.1:${/"port":(\d+)/.exec(ingress.line)?.[1]}`;
const { cpoToken, emspToken } = await onboardForBench(stack, hub, { cpo: { countryCode: 'NL', partyId: 'BEN' }, emsp: { countryCode: 'NL', partyId: 'EMB' } });
const store = postgresReadModelStore(stack.pool);
const figures: Record<string, Figure> = { locations: count };
try {
  // 1. Append N location PUTs straight to the topic (the ingress path is measured separately).
  const t0 = Date.now();
  const batch = 1000;
  for (let i = 0; i < count; i += batch) {
    const events = Array.from({ length: Math.min(batch, count - i) }, (_, j) => {
      const n = i + j;
      const id = `LOC-${String(n).padStart(6, '0')}`;
      const path = { countryCode: 'NL', partyId: 'BEN', id };
      const stamp = new Date(Date.UTC(2024, 0, 1) + n * 1000).toISOString();
      return newEvent({ type: locationEventTypes.locationPut, source: 'bench', subject: pathSubject(path), key: objectKey(path), data: { ...template, country_code: 'NL', party_id: 'BEN', id, last_updated: stamp } });
    });
    await stack.eventLog.append(topics.locations, events);
  }
  const appendSeconds = (Date.now() - t0) / 1000;
  out(`appended ${count} location events in ${appendSeconds.toFixed(1)} s (${(count / appendSeconds).toFixed(0)} events/s)`);

  const projector = await startNode(join(repoRoot, 'services', 'projector', 'src', 'main.ts'), [], stack.env({ LOG_LEVEL: 'info' }), /projector running/);
  const t1 = Date.now();
  for (;;) {
    const positions = await store.positions('locations');
    const done = [...positions.values()].reduce((a, b) => a + b, 0n);
    if (done >= BigInt(count)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const projectSeconds = (Date.now() - t1) / 1000;
  figures['projection_events_per_s'] = count / projectSeconds;
  out(`projector applied ${count} events in ${projectSeconds.toFixed(1)} s (${(count / projectSeconds).toFixed(0)} events/s, includes consumer start)`);
  // Steady state: autovacuum (tuned in migration 003) sets the visibility map shortly after a bulk
  // load; do it now instead of waiting for its next round.
  await store.maintain('locations');

  // 2. Pages at random offsets.
  const pageTimes: number[] = [];
  for (let i = 0; i < 200; i++) {
    const offset = Math.floor(Math.random() * count);
    const started = performance.now();
    const res = await call(hub, 'GET', `/ocpi/2.2.1/locations?offset=${offset}&limit=100`, { token: emspToken });
    pageTimes.push(performance.now() - started);
    if (res.body.status_code !== 1000) throw new Error(res.text);
  }
  Object.assign(figures, { page_p50_ms: percentile(pageTimes, 50), page_p95_ms: percentile(pageTimes, 95) });
  out(`page of 100 at a random offset of ${count}: p50 ${percentile(pageTimes, 50).toFixed(1)} ms, p95 ${percentile(pageTimes, 95).toFixed(1)} ms, max ${Math.max(...pageTimes).toFixed(1)} ms (200 requests)`);

  // 3. Full sync by Link following.
  const full = await followLinks(hub, emspToken, '/ocpi/2.2.1/locations?limit=1000');
  figures['full_sync_s'] = full.seconds;
  out(`full sync by Link following: ${full.records} locations in ${full.pages} pages, ${full.seconds.toFixed(1)} s`);

  // 4. Projection lag at a steady PATCH rate through the ingress.
  const lags: number[] = [];
  const lagCpuBefore = { bench: process.cpuUsage(), ingress: cpuSeconds(ingress.child.pid ?? 0), projector: cpuSeconds(projector.child.pid ?? 0), postgres: postgresCpuSeconds() };
  const lagStart = Date.now();
  const deadline = lagStart + lagSeconds * 1000;
  let sent = 0;
  let sampleDue = Date.now();
  const inFlight = new Set<Promise<unknown>>();
  while (Date.now() < deadline) {
    // Paced by the clock, not by ticks: a late timer sends what is due, so the rate holds on average.
    const due = Math.floor(((Date.now() - lagStart) * lagRate) / 1000);
    // At most 200 in flight: a hub that falls behind shows as a lower achieved rate, not as a pile-up.
    while (sent < due && inFlight.size < 200) {
      const n = sent++ % count;
      const id = `LOC-${String(n).padStart(6, '0')}`;
      const name = `lag-${sent}`;
      const p = call(hub, 'PATCH', `/ocpi/2.2.1/locations/NL/BEN/${id}`, { token: cpoToken, body: { name, last_updated: new Date().toISOString() } }).then(async (res) => {
        if (res.body.status_code !== 1000) throw new Error(res.text);
        if (Date.now() >= sampleDue) {
          sampleDue = Date.now() + 20;
          const answered = performance.now();
          for (;;) {
            const { rows } = await stack.pool.query<{ name: string }>(
              "select document->>'name' as name from locations where country_code = 'NL' and party_id = 'BEN' and id = $1 and generation = (select active from read_model_generations where model = 'locations')",
              [id],
            );
            if (rows[0]?.name === name || Number(rows[0]?.name?.slice(4)) > Number(name.slice(4))) break;
            // Every 5 ms: the probe is itself a query, and must not become the load it measures.
            await new Promise((r) => setTimeout(r, 5));
          }
          lags.push(performance.now() - answered);
        }
      });
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  const sendSeconds = (Date.now() - lagStart) / 1000;
  await Promise.all(inFlight);
  Object.assign(figures, { lag_p50_ms: percentile(lags, 50), lag_p95_ms: percentile(lags, 95), lag_achieved_per_s: sent / sendSeconds });
  out(`projection lag at ${lagRate} PATCH/s for ${lagSeconds} s (${sent} sent, ${(sent / sendSeconds).toFixed(0)}/s achieved, ${lags.length} sampled): p50 ${percentile(lags, 50).toFixed(0)} ms, p95 ${percentile(lags, 95).toFixed(0)} ms, max ${Math.max(...lags).toFixed(0)} ms`);

  const lagCpu = process.cpuUsage(lagCpuBefore.bench);
  out(
    `CPU during the lag phase: load generator (this process) ${((lagCpu.user + lagCpu.system) / 1e6).toFixed(1)} s, ingress ${(cpuSeconds(ingress.child.pid ?? 0) - lagCpuBefore.ingress).toFixed(1)} s, ` +
      `projector ${(cpuSeconds(projector.child.pid ?? 0) - lagCpuBefore.projector).toFixed(1)} s, Postgres ${(postgresCpuSeconds() - lagCpuBefore.postgres).toFixed(1)} s`,
  );

  // 4b. Incremental sync (date_from = the start of the lag phase: the locations PATCHed since): pages
  // of that filtered list at random offsets, and the whole of it by Link following.
  const since = new Date(lagStart).toISOString();
  const first = await call<unknown[]>(hub, 'GET', `/ocpi/2.2.1/locations?date_from=${since}&limit=100`, { token: emspToken });
  const changed = Number(first.headers['x-total-count'] ?? 0);
  const sinceTimes: number[] = [];
  for (let i = 0; i < 100; i++) {
    const offset = Math.floor(Math.random() * Math.max(changed, 1));
    const started = performance.now();
    const res = await call(hub, 'GET', `/ocpi/2.2.1/locations?date_from=${since}&offset=${offset}&limit=100`, { token: emspToken });
    sinceTimes.push(performance.now() - started);
    if (res.body.status_code !== 1000) throw new Error(res.text);
  }
  const incremental = await followLinks(hub, emspToken, `/ocpi/2.2.1/locations?date_from=${since}&limit=1000`);
  const sinceRecords = incremental.records;
  Object.assign(figures, { incremental_page_p95_ms: percentile(sinceTimes, 95), incremental_sync_s: incremental.seconds });
  out(
    `incremental sync (date_from, ${changed} of ${count} changed): page of 100 at a random offset p50 ${percentile(sinceTimes, 50).toFixed(1)} ms, ` +
      `p95 ${percentile(sinceTimes, 95).toFixed(1)} ms (100 requests); all ${sinceRecords} by Link following in ${incremental.seconds.toFixed(1)} s`,
  );

  // 5. Rebuild by replay of everything in the topic.
  const brokerPid = Number(process.env['TEST_BROKER_PID'] ?? 0);
  const cpuBefore = { rebuild: process.cpuUsage(), postgres: postgresCpuSeconds(), broker: brokerPid > 0 ? cpuSeconds(brokerPid) : 0 };
  const rebuildStart = Date.now();
  let firstApplied = 0;
  const result = await profiled('rebuild', () =>
    rebuildReadModel({ eventLog: stack.eventLog, store }, 'locations', (p) => {
      if (p.applied > 0n && firstApplied === 0) firstApplied = Date.now();
    }),
  );
  const rebuildCpu = process.cpuUsage(cpuBefore.rebuild);
  out(
    `CPU during the rebuild: rebuild (this process) ${((rebuildCpu.user + rebuildCpu.system) / 1e6).toFixed(1)} s, Postgres ${(postgresCpuSeconds() - cpuBefore.postgres).toFixed(1)} s, ` +
      `broker ${brokerPid > 0 ? (cpuSeconds(brokerPid) - cpuBefore.broker).toFixed(1) : '-'} s`,
  );
  figures['rebuild_events_per_s'] = result.eventsPerSecond;
  const applySeconds = result.seconds - (firstApplied - rebuildStart) / 1000;
  out(
    `rebuild by replay: ${result.events} events, ${result.rows} rows in ${result.seconds.toFixed(1)} s end to end (${result.eventsPerSecond.toFixed(0)} events/s); ` +
      `${((firstApplied - rebuildStart) / 1000).toFixed(1)} s until the first batch (consumer group join), then ${(Number(result.events) / applySeconds).toFixed(0)} events/s`,
  );
  projector.child.kill('SIGTERM');
} finally {
  ingress.child.kill('SIGTERM');
  await stack.cleanup();
}
out(`(${new Date().toISOString()}, node ${process.version}, 2 cores)`);
printFigures(figures);
process.exit(0);
