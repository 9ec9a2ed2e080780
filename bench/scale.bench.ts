// How the locations figures grow with the table: one stack, one projector process,
// the read model grown to each size in turn (default 50k, 200k, 500k locations, seeded by appending
// location PUTs straight to the topic in parallel batches), and at each size:
//   - a page of 100 at random offsets: p50/p95 (200 requests),
//   - a full sync by Link following (limit 1000),
//   - projection lag (PATCH answered -> visible in the read model) at a steady PATCH rate,
//   - an incremental sync (date_from = start of the lag phase): page p95 at random offsets,
//   - rebuild by replay of the whole topic (hubctl readmodel rebuild, its own process): events/s end to end,
//   - RSS of the ingress (after the lag phase, and largest during the pages, the full sync and the
//     lag phase), the projector and hubctl (largest sampled), each run
//     with the memory settings `npm start` gives it (infra/stack/node-memory.ts), and where each
//     one's memory was at its largest RSS (bench/memory-probe.ts: V8 heap, Buffers, the rest).
// Then the ratio of the largest size's figures to the smallest's.
// Run: npm run bench -- scale [sizes=50000,200000,500000] [lag rate/s=1000] [lag seconds=15]
// Bounded: about 1 min per 50k locations on a quiet 2-core machine (seeding, projection, rebuild).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { locationEventTypes, newEvent, topics } from '@hub/events';
import { objectKey, pathSubject } from '@hub/modules';
import { postgresReadModelStore } from '@hub/store';
import { call, createTestStack, repoRoot } from '@hub/testing';
import { cpuSeconds, followLinks, onboardForBench, percentile, rssMiB, startNode } from './load.ts';
import { benchMemorySettings, describeMemory, MEMORY_PROBE_ARGS, memoryProbeLine, type MemoryFigures } from './memory.ts';
import { printFigures, type Figure } from './figures.ts';

const sizes = (process.argv[2] ?? '50000,200000,500000').split(',').map(Number);
const lagRate = Number(process.argv[3] ?? 1000);
const lagSeconds = Number(process.argv[4] ?? 15);
const out = (line: string) => process.stdout.write(`${line}\n`);
const template = JSON.parse(readFileSync(join(repoRoot, '..', 'shared', 'ocpi-2.2.1', 'examples', 'location_example.json'), 'utf8')) as Record<string, unknown>;
const stack = await createTestStack('bench_scale');
// The list rate limit (200/min) would cut the measurement short; it has its own test.
const ingress = await startNode(
  join(repoRoot, 'services', 'ingress', 'src', 'main.ts'),
  [],
  stack.env({ HUB_PORT: '0', ACCESS_LOG: 'errors', LOG_LEVEL: 'info', PAGE_LIMIT_MAX: '1000', RATE_LIMIT_LOCATION_LISTS: '1000000' }),
  /ingress listening/,
  { memoryProbe: true },
);
const hub = `http://127.0.0.1:${/"port":(\d+)/.exec(ingress.line)?.[1]}`;
const { cpoToken, emspToken } = await onboardForBench(stack, hub, { cpo: { countryCode: 'NL', partyId: 'BEN' }, emsp: { countryCode: 'NL', partyId: 'EMB' } });
const store = postgresReadModelStore(stack.pool);
const projector = await startNode(join(repoRoot, 'services', 'projector', 'src', 'main.ts'), [], stack.env({ LOG_LEVEL: 'info' }), /projector running/, { memoryProbe: true });
const locationId = (n: number) => `LOC-${String(n).padStart(7, '0')}`;

/** Appends location PUTs [from, to) in batches of 1,000, four batches in flight. */
async function seed(from: number, to: number): Promise<void> {
  let next = from;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < to) {
        const start = next;
        next = Math.min(to, next + 1000);
        const events = Array.from({ length: next - start }, (_, j) => {
          const n = start + j;
          const path = { countryCode: 'NL', partyId: 'BEN', id: locationId(n) };
          const stamp = new Date(Date.UTC(2024, 0, 1) + n * 1000).toISOString();
          return newEvent({ type: locationEventTypes.locationPut, source: 'bench', subject: pathSubject(path), key: objectKey(path), data: { ...template, country_code: 'NL', party_id: 'BEN', id: path.id, last_updated: stamp } });
        });
        await stack.eventLog.append(topics.locations, events);
      }
    }),
  );
}

async function projected(): Promise<bigint> {
  return [...(await store.positions('locations')).values()].reduce((a, b) => a + b, 0n);
}

/** p50/p95 of `requests` pages of 100 at random offsets below `total`. */
async function pages(query: string, total: number, requests: number): Promise<{ p50: number; p95: number; max: number }> {
  const times: number[] = [];
  for (let i = 0; i < requests; i++) {
    const started = performance.now();
    const res = await call(hub, 'GET', `/ocpi/2.2.1/locations?${query}offset=${Math.floor(Math.random() * Math.max(total, 1))}&limit=100`, { token: emspToken });
    times.push(performance.now() - started);
    if (res.body.status_code !== 1000) throw new Error(res.text);
  }
  return { p50: percentile(times, 50), p95: percentile(times, 95), max: Math.max(...times) };
}

/** Follows Link headers from the first page; returns records and seconds. */
const linkSync = (query: string) => followLinks(hub, emspToken, `/ocpi/2.2.1/locations?${query}limit=1000`);

/** PATCHes at `lagRate`/s (paced by the clock, at most 200 in flight); lag sampled every 20 ms. */
async function lagPhase(count: number, tag: string): Promise<{ p50: number; p95: number; achieved: number }> {
  const lags: number[] = [];
  const lagStart = Date.now();
  let sent = 0;
  let sampleDue = Date.now();
  const inFlight = new Set<Promise<unknown>>();
  while (Date.now() < lagStart + lagSeconds * 1000) {
    const due = Math.floor(((Date.now() - lagStart) * lagRate) / 1000);
    while (sent < due && inFlight.size < 200) {
      const id = locationId(Math.floor(Math.random() * count));
      const name = `${tag}-${sent++}`;
      const p = call(hub, 'PATCH', `/ocpi/2.2.1/locations/NL/BEN/${id}`, { token: cpoToken, body: { name, last_updated: new Date().toISOString() } }).then(async (res) => {
        if (res.body.status_code !== 1000) throw new Error(res.text);
        if (Date.now() < sampleDue) return;
        sampleDue = Date.now() + 20;
        const answered = performance.now();
        for (;;) {
          const { rows } = await stack.pool.query<{ name: string }>(
            "select document->>'name' as name from locations where country_code = 'NL' and party_id = 'BEN' and id = $1 and generation = (select active from read_model_generations where model = 'locations')",
            [id],
          );
          // A later PATCH of the same location may have overtaken this one: that also means it is visible.
          if (rows[0]?.name === name || (rows[0]?.name?.startsWith(`${tag}-`) && Number(rows[0].name.slice(tag.length + 1)) > Number(name.slice(tag.length + 1)))) break;
          await new Promise((r) => setTimeout(r, 5));
        }
        lags.push(performance.now() - answered);
      });
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  const achieved = sent / ((Date.now() - lagStart) / 1000);
  await Promise.all(inFlight);
  return { p50: percentile(lags, 50), p95: percentile(lags, 95), achieved };
}

/**
 * `hubctl readmodel rebuild --model locations` as its own process, run as `npm run hubctl` runs it
 * (its memory settings); `sample` sees its RSS every 200 ms, `peak` where its memory was at its largest.
 */
function hubctlRebuild(sample: (rssMiB: number) => void): Promise<{ events: number; seconds: number; eventsPerSecond: number; cpuSeconds: number; peak: MemoryFigures | undefined }> {
  return new Promise((resolve, reject) => {
    const memory = benchMemorySettings('hubctl');
    const child = spawn(process.execPath, [...process.execArgv, ...memory.flags, ...MEMORY_PROBE_ARGS, join(repoRoot, 'packages', 'hubctl', 'src', 'main.ts'), 'readmodel', 'rebuild', '--model', 'locations'], {
      env: { PATH: process.env['PATH'] ?? '', ...memory.env, ...stack.env({}) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let cpu = 0;
    let peak: MemoryFigures | undefined;
    let rest = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      const lines = (rest + d.toString()).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) peak = memoryProbeLine(line) ?? peak;
    });
    const timer = setInterval(() => {
      try {
        sample(rssMiB(child.pid));
        // Its CPU so far: the last sample, 200 ms before it ended at most, is nearly all of it.
        cpu = cpuSeconds(child.pid ?? 0);
      } catch {
        // It just ended.
      }
    }, 200);
    child.once('exit', (code) => {
      clearInterval(timer);
      // hubctl readmodel rebuild's summary: "... N snapshot records, then up to N events, N rows in S s; now serving".
      const m = /(\d+) events, \d+ rows in ([\d.]+) s/.exec(output);
      if (code !== 0 || !m) return reject(new Error(`hubctl rebuild exited ${code}: ${output.slice(-500)}`));
      resolve({ events: Number(m[1]), seconds: Number(m[2]), eventsPerSecond: Number(m[1]) / Math.max(Number(m[2]), 0.001), cpuSeconds: cpu, peak });
    });
  });
}

const rows: Array<Record<string, number>> = [];
let seeded = 0;
try {
  for (const size of sizes) {
    const t0 = Date.now();
    const projectorCpu0 = cpuSeconds(projector.child.pid ?? 0);
    const projectedBefore = await projected();
    const from = seeded;
    await seed(from, size);
    const appendSeconds = (Date.now() - t0) / 1000;
    // Everything in the topic so far (the PUTs and the earlier sizes' lag PATCHes) must be projected.
    const target = [...(await stack.eventLog.latestOffsets(topics.locations)).values()].reduce((a, b) => a + b, 0n);
    seeded = size;
    let projectorRss = 0;
    while ((await projected()) < target) {
      projectorRss = Math.max(projectorRss, rssMiB(projector.child.pid));
      await new Promise((r) => setTimeout(r, 200));
    }
    const projectSeconds = (Date.now() - t0) / 1000;
    // CPU per projected event: steadier than the rate on a shared host, and what GC settings change.
    const projectCpuUs = ((cpuSeconds(projector.child.pid ?? 0) - projectorCpu0) * 1e6) / Math.max(1, Number(target - projectedBefore));
    out(`${size}: appended ${size - from} location PUTs in ${appendSeconds.toFixed(1)} s; projected by ${projectSeconds.toFixed(1)} s (projector CPU ${projectCpuUs.toFixed(0)} µs per event)`);
    await store.maintain('locations');

    // The ingress's RSS, largest while it serves the full sync's 1,000-location pages and the PATCHes.
    let ingressRssMax = 0;
    const ingressSampler = setInterval(() => (ingressRssMax = Math.max(ingressRssMax, rssMiB(ingress.child.pid))), 200);
    const page = await pages('', size, 200);
    // The largest is a caller's first deep page, which ranks the list for the rank anchors (README, Scale).
    out(`${size}: page of 100 at a random offset p50 ${page.p50.toFixed(1)} ms, p95 ${page.p95.toFixed(1)} ms, max ${page.max.toFixed(1)} ms (200 requests)`);
    const full = await linkSync('');
    if (full.records !== size) throw new Error(`full sync returned ${full.records} of ${size}`);
    out(`${size}: full sync by Link following (limit 1000) ${full.seconds.toFixed(1)} s`);

    const since = new Date().toISOString();
    const lag = await lagPhase(size, `lag${size}`);
    out(`${size}: projection lag at ${lagRate} PATCH/s for ${lagSeconds} s (${lag.achieved.toFixed(0)}/s achieved): p50 ${lag.p50.toFixed(0)} ms, p95 ${lag.p95.toFixed(0)} ms`);
    clearInterval(ingressSampler);
    const ingressRss = rssMiB(ingress.child.pid);
    ingressRssMax = Math.max(ingressRssMax, ingressRss);
    let rebuildRss = 0;
    const first = await call<unknown[]>(hub, 'GET', `/ocpi/2.2.1/locations?date_from=${since}&limit=1`, { token: emspToken });
    const changed = Number(first.headers['x-total-count'] ?? 0);
    const incremental = await pages(`date_from=${since}&`, changed, 100);
    out(`${size}: incremental sync (date_from, ${changed} changed): page of 100 at a random offset p50 ${incremental.p50.toFixed(1)} ms, p95 ${incremental.p95.toFixed(1)} ms (100 requests)`);

    // The rebuild as an operator runs it: hubctl in its own process, its RSS sampled.
    const rebuild = await hubctlRebuild((rss) => {
      rebuildRss = Math.max(rebuildRss, rss);
      projectorRss = Math.max(projectorRss, rssMiB(projector.child.pid));
    });
    const rebuildCpuUs = (rebuild.cpuSeconds * 1e6) / Math.max(1, rebuild.events);
    out(`${size}: rebuild by replay (hubctl) ${rebuild.events} events in ${rebuild.seconds.toFixed(1)} s (${rebuild.eventsPerSecond.toFixed(0)} events/s end to end; hubctl CPU ${rebuildCpuUs.toFixed(0)} µs per event)`);
    await store.maintain('locations');
    out(`${size}: RSS ingress ${ingressRss.toFixed(0)} MiB after the lag phase (max ${ingressRssMax.toFixed(0)} MiB during the pages, full sync and lag phase), projector max ${projectorRss.toFixed(0)} MiB, rebuild (hubctl) max ${rebuildRss.toFixed(0)} MiB`);
    out(`${size}: at the largest RSS so far: ingress ${describeMemory(ingress.memoryPeak())}`);
    out(`${size}:   projector ${describeMemory(projector.memoryPeak())}`);
    out(`${size}:   hubctl rebuild ${describeMemory(rebuild.peak)}`);
    rows.push({
      locations: size,
      page_p95_ms: page.p95,
      page_max_ms: page.max,
      full_sync_s: full.seconds,
      incremental_page_p95_ms: incremental.p95,
      rebuild_events_per_s: rebuild.eventsPerSecond,
      rebuild_cpu_us_per_event: rebuildCpuUs,
      projector_cpu_us_per_event: projectCpuUs,
      lag_p95_ms: lag.p95,
      lag_achieved_per_s: lag.achieved,
      ingress_rss_mib: ingressRss,
      ingress_rss_max_mib: ingressRssMax,
      projector_rss_mib: projectorRss,
      rebuild_rss_mib: rebuildRss,
    });
  }
} finally {
  ingress.child.kill('SIGTERM');
  projector.child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 1000));
  await stack.cleanup();
}

const keys = Object.keys(rows[0] ?? {}).filter((k) => k !== 'locations');
out(`\n${'figure'.padEnd(26)}${rows.map((r) => String(r['locations']).padStart(12)).join('')}  ratio last/first`);
const figures: Record<string, Figure> = {};
for (const k of keys) {
  const first = rows[0]?.[k] ?? Number.NaN;
  const last = rows.at(-1)?.[k] ?? Number.NaN;
  out(`${k.padEnd(26)}${rows.map((r) => (r[k] ?? Number.NaN).toFixed(1).padStart(12)).join('')}  ${(last / first).toFixed(2).padStart(8)}`);
  for (const r of rows) figures[`${k}_at_${r['locations']}`] = r[k] ?? null;
  figures[`${k}_ratio_${rows.at(-1)?.['locations']}_to_${rows[0]?.['locations']}`] = last / first;
}
out(`(lag ${lagRate} PATCH/s for ${lagSeconds} s per size, ${new Date().toISOString()}, node ${process.version}, 2 cores)`);
printFigures(figures);
process.exit(0);
