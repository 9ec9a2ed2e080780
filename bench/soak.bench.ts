// Memory under a long mixed load (Memory under soak): every service of the hub runs as a
// process of its own on the real stack while a bounded mixed load runs for N minutes (location PUTs
// then EVSE status PATCHes, session PUTs to two eMSPs, CDR POSTs, eMSP location list pulls). The RSS
// of each service is sampled every few seconds and printed per minute; the slope (MiB per minute, a
// least-squares fit) over the second half and over the last third says whether memory levels off.
// The last line is one JSON object with every figure.
// Run: npm run bench -- soak [minutes=10] [patches/s=100] [sessions/s=40] [cdrs/s=10]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PartyRef } from '@hub/ocpi';
import { setRoutingRule } from '@hub/registry';
import { postgresRegistryStore } from '@hub/store';
import { call, createTestStack, repoRoot, startPartnerSimulator, type PartnerSimulator } from '@hub/testing';
import { benchPlatform, rssMiB, startNode } from './load.ts';
import { printFigures, type Figure } from './figures.ts';

type Json = Record<string, unknown>;
const minutes = Number(process.argv[2] ?? 10);
const patchRate = Number(process.argv[3] ?? 100);
const sessionRate = Number(process.argv[4] ?? 40);
const cdrRate = Number(process.argv[5] ?? 10);
const SAMPLE_MS = 5_000;
const LOCATIONS = 200;
const out = (line: string) => process.stdout.write(`${line}\n`);
const examples = join(repoRoot, '..', 'shared', 'ocpi-2.2.1', 'examples');
const example = (name: string) => JSON.parse(readFileSync(join(examples, name), 'utf8')) as Json;
const locationTemplate = example('location_example.json');
const sessionTemplate = example('session_example_1_simple_start.json');
const cdrTemplate = example('cdr_example.json');

const stack = await createTestStack('bench_soak');
const env = stack.env({
  HUB_PORT: '0',
  LOG_LEVEL: 'warn',
  ALLOW_HTTP_PARTNER_URLS: 'true',
  PARTNER_ALLOWED_HOSTS: '127.0.0.1',
  DELIVERY_TIMEOUT_MS: '2000',
  PROBE_INTERVAL_MS: '5000',
  // The list pulls stay far below it; the soak is about memory, not rate limits.
  RATE_LIMIT_LOCATION_LISTS: '100000',
});
const secret = env['HUB_SECRET_KEY'] ?? '';
const deps = { store: postgresRegistryStore(stack.pool), source: 'bench', actor: 'bench' };
const cpo: PartyRef = { countryCode: 'NL', partyId: 'SOK' };
const emsps: Array<{ party: PartyRef; sim: PartnerSimulator; token: string }> = [];
const cpoToken = await benchPlatform(stack, secret, cpo, 'CPO');
for (const partyId of ['EMA', 'EMB']) {
  const party = { countryCode: 'DE', partyId };
  const sim = await startPartnerSimulator();
  const token = await benchPlatform(stack, secret, party, 'EMSP', sim);
  await setRoutingRule(deps, { emsp: party, cpo, enabled: true });
  emsps.push({ party, sim, token });
}

const main = (service: string) => join(repoRoot, 'services', service, 'src', 'main.ts');
const serviceEnv = { ...env, LOG_LEVEL: 'info' };
// V8's GC trace: the heap left after each full (mark-compact) collection is what a leak makes grow;
// RSS and heap-in-use also move with garbage not yet collected.
const afterFullGc: Record<string, Array<[number, number]>> = {};
let soakStarted = Date.now();
const traced = (service: string, ready: RegExp) => {
  const points: Array<[number, number]> = [];
  afterFullGc[service] = points;
  return startNode(main(service), [], serviceEnv, ready, {
    nodeArgs: ['--trace-gc'],
    onLine: (line) => {
      const m = /Mark-Compact[^\d]*[\d.]+ \([\d.]+\) -> ([\d.]+) \(/.exec(line);
      if (m) points.push([(Date.now() - soakStarted) / 60_000, Number(m[1])]);
    },
  });
};
const services = {
  ingress: await traced('ingress', /ingress listening/),
  projector: await traced('projector', /projector running/),
  dispatcher: await traced('dispatcher', /dispatcher running/),
  prober: await traced('prober', /prober running/),
};
const hub = `http://127.0.0.1:${/"port":(\d+)/.exec(services.ingress.line)?.[1]}`;
const names = Object.keys(services) as Array<keyof typeof services>;
const operatorPort = (service: keyof typeof services) => /"operatorPort":(\d+)/.exec(services[service].line)?.[1];

/** V8 heap in use and memory outside it (Buffers), from the service's own /metrics: which of the two grows. */
async function heapMiB(service: keyof typeof services): Promise<{ heap: number; external: number }> {
  const text = await fetch(`http://127.0.0.1:${operatorPort(service)}/metrics`).then((r) => r.text(), () => '');
  const metric = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)`, 'm').exec(text)?.[1] ?? Number.NaN) / 2 ** 20;
  return { heap: metric('nodejs_heap_size_used_bytes'), external: metric('nodejs_external_memory_bytes') };
}

/** Least-squares slope of y over x. */
function slope(points: ReadonlyArray<readonly [number, number]>): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return sxx === 0 ? Number.NaN : sxy / sxx;
}

const counts = { patches: 0, sessions: 0, cdrs: 0, pulls: 0, refused: 0, failed: 0 };
const pending = new Set<Promise<unknown>>();
function fire(method: 'PUT' | 'PATCH' | 'POST' | 'GET', path: string, token: string, body?: Json): void {
  const p = call(hub, method, path, { token, ...(body ? { body } : {}) }).then(
    (r) => {
      if ((r.body as { status_code?: number }).status_code !== 1000) counts.refused++;
    },
    () => counts.failed++,
  );
  pending.add(p);
  void p.finally(() => pending.delete(p));
}

const samples: Record<string, Array<[number, number]>> = Object.fromEntries(names.map((n) => [n, []]));
const heapSamples: Record<string, Array<[number, number]>> = Object.fromEntries(names.map((n) => [n, []]));
let figures: Record<string, Figure> = {};
try {
  // The locations the PATCHes go to.
  for (let i = 0; i < LOCATIONS; i++) {
    const id = `SOAK${i}`;
    const r = await call(hub, 'PUT', `/ocpi/2.2.1/locations/NL/SOK/${id}`, { token: cpoToken, body: { ...locationTemplate, country_code: 'NL', party_id: 'SOK', id, last_updated: new Date().toISOString() } });
    if ((r.body as { status_code?: number }).status_code !== 1000) throw new Error(`location PUT refused: ${r.text}`);
  }
  const evse = (locationTemplate['evses'] as Json[])[0] as Json;
  const evseUid = String(evse['uid']);
  const started = Date.now();
  soakStarted = started;
  const deadline = started + minutes * 60_000;
  let nextSample = started;
  let lastMinute = -1;
  let tick = 0;
  out(`soak: ${minutes} min; per second ${patchRate} EVSE PATCHes, ${sessionRate} session PUTs, ${cdrRate} CDR POSTs, 1 location list pull; RSS sampled every ${SAMPLE_MS / 1000} s`);
  out(`minute  ${names.map((n) => n.padStart(14)).join(' ')}   (MiB: RSS/V8 heap used/external)`);
  while (Date.now() < deadline) {
    const at = Date.now();
    // 10 ms ticks: each rate spread evenly over the second.
    const share = (rate: number) => Math.floor(((tick + 1) * rate) / 100) - Math.floor((tick * rate) / 100);
    for (let k = 0; k < share(patchRate); k++) {
      const n = counts.patches++;
      fire('PATCH', `/ocpi/2.2.1/locations/NL/SOK/SOAK${n % LOCATIONS}/${evseUid}`, cpoToken, { status: n % 2 ? 'CHARGING' : 'AVAILABLE', last_updated: new Date().toISOString() });
    }
    for (let k = 0; k < share(sessionRate); k++) {
      const n = counts.sessions++;
      const emsp = emsps[n % emsps.length] as (typeof emsps)[number];
      // Sessions are updated a few times each (newest wins), then new ones start.
      const id = `S${Math.floor(n / 4)}`;
      const body = { ...sessionTemplate, country_code: 'NL', party_id: 'SOK', id, kwh: n % 4, cdr_token: { ...(sessionTemplate['cdr_token'] as Json), country_code: emsp.party.countryCode, party_id: emsp.party.partyId }, last_updated: new Date().toISOString() };
      fire('PUT', `/ocpi/2.2.1/sessions/NL/SOK/${id}`, cpoToken, body);
    }
    for (let k = 0; k < share(cdrRate); k++) {
      const n = counts.cdrs++;
      const emsp = emsps[n % emsps.length] as (typeof emsps)[number];
      fire('POST', '/ocpi/2.2.1/cdrs', cpoToken, { ...cdrTemplate, country_code: 'NL', party_id: 'SOK', id: `CDR${n}`, cdr_token: { ...(cdrTemplate['cdr_token'] as Json), country_code: emsp.party.countryCode, party_id: emsp.party.partyId } });
    }
    if (tick % 100 === 0) {
      counts.pulls++;
      fire('GET', `/ocpi/2.2.1/locations?offset=${(counts.pulls * 50) % LOCATIONS}&limit=50`, (emsps[0] as (typeof emsps)[number]).token);
    }
    tick = (tick + 1) % 100;
    if (Date.now() >= nextSample) {
      nextSample += SAMPLE_MS;
      const minute = (Date.now() - started) / 60_000;
      for (const n of names) samples[n]?.push([minute, rssMiB(services[n].child.pid)]);
      if (Math.floor(minute) > lastMinute) {
        lastMinute = Math.floor(minute);
        const heaps = await Promise.all(names.map((n) => heapMiB(n)));
        names.forEach((n, i) => heapSamples[n]?.push([minute, heaps[i]?.heap ?? Number.NaN]));
        const cell = (n: (typeof names)[number], i: number) => `${(samples[n]?.at(-1)?.[1] ?? 0).toFixed(0)}/${(heaps[i]?.heap ?? 0).toFixed(0)}/${(heaps[i]?.external ?? 0).toFixed(0)}`;
        out(`${String(lastMinute).padStart(6)}  ${names.map((n, i) => cell(n, i).padStart(14)).join(' ')}`);
      }
      // The emitted sessions and CDRs are not kept in the simulators' memory: this process is not measured, but it must stay bounded.
      for (const e of emsps) e.sim.received.length = 0;
    }
    const wait = 10 - (Date.now() - at);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  await Promise.all(pending);
  const result: Record<string, number> = { minutes, patches: counts.patches, sessions: counts.sessions, cdrs: counts.cdrs, pulls: counts.pulls, refused: counts.refused, failed: counts.failed };
  out(`sent ${counts.patches} PATCHes, ${counts.sessions} session PUTs, ${counts.cdrs} CDRs, ${counts.pulls} pulls; ${counts.refused} refused, ${counts.failed} failed`);
  for (const n of names) {
    const s = samples[n] ?? [];
    const secondHalf = s.filter(([m]) => m >= minutes / 2);
    const lastThird = s.filter(([m]) => m >= (minutes * 2) / 3);
    const start = s[0]?.[1] ?? 0;
    const end = s.at(-1)?.[1] ?? 0;
    const max = Math.max(...s.map(([, v]) => v));
    result[`${n}_rss_start_mib`] = Math.round(start);
    result[`${n}_rss_end_mib`] = Math.round(end);
    result[`${n}_rss_max_mib`] = Math.round(max);
    result[`${n}_slope_second_half_mib_per_min`] = Number(slope(secondHalf).toFixed(2));
    result[`${n}_slope_last_third_mib_per_min`] = Number(slope(lastThird).toFixed(2));
    result[`${n}_heap_slope_second_half_mib_per_min`] = Number(slope((heapSamples[n] ?? []).filter(([m]) => m >= minutes / 2)).toFixed(2));
    const gcs = (afterFullGc[n] ?? []).filter(([m]) => m >= 0);
    const gcSecondHalf = gcs.filter(([m]) => m >= minutes / 2);
    result[`${n}_full_gcs`] = gcs.length;
    result[`${n}_heap_after_full_gc_end_mb`] = Number((gcs.at(-1)?.[1] ?? Number.NaN).toFixed(1));
    result[`${n}_heap_after_full_gc_slope_second_half_mb_per_min`] = Number(slope(gcSecondHalf).toFixed(3));
    out(`${n}: heap after full GC ${(gcs[0]?.[1] ?? Number.NaN).toFixed(1)} -> ${(gcs.at(-1)?.[1] ?? Number.NaN).toFixed(1)} MB over ${gcs.length} full GCs; slope ${slope(gcSecondHalf).toFixed(3)} MB/min over the second half`);
    out(`${n}: RSS ${start.toFixed(0)} -> ${end.toFixed(0)} MiB (max ${max.toFixed(0)}); slope ${slope(secondHalf).toFixed(2)} MiB/min over the second half, ${slope(lastThird).toFixed(2)} over the last third`);
  }
  out(`(${new Date().toISOString()}, node ${process.version}, 2 cores)`);
  figures = result;
} finally {
  for (const n of names) services[n].child.kill('SIGTERM');
  for (const e of emsps) await e.sim.close();
  await new Promise((r) => setTimeout(r, 1000));
  await stack.cleanup();
}
printFigures(figures);
process.exit(0);
