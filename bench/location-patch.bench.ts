// Durable status PATCHes: PATCH an EVSE's status and a connector on the connector path,
// each answered only after Kafka acknowledged the event with acks=all, against a bare express "hello"
// and against a CRUD peer (bench/crud-peer.ts, express + pg writing the merged Location with
// a synchronous commit) in the same run (autocannon on loopback, targets alternating, medians of the
// rounds). The projector runs, as in production, so existence checks read a live read model.
// Run: npm run bench -- location-patch [seconds=10] [connections=50] [rounds=3] [warm-up seconds=20]
// BENCH_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=DIR" profiles the ingress and the projector (see README, Benchmarks).
// BENCH_PACED_RATE=N paces the hub at N PATCH/s instead of the peer's rate (with rounds=0 the paced
// phase alone runs, after the warm-up); BENCH_PACED_TRACE=FILE appends each request answered over
// 30 ms after it was due (and when it was sent) and each paced phase's window as JSON lines, to line
// up with other traces (README, "Where a durable PATCH's time goes"). BENCH_NODE_OPTIONS reaches the
// projector as well as the ingress.
// BENCH_BASELINE_CHECKOUT=DIR starts a second ingress from another checkout of the hub (a git worktree at
// an older commit, its dependencies installed) against the same stack and projector, and alternates its
// PATCHes with this checkout's in the same rounds: a change's cost, measured on one machine state
// (it must share this checkout's migrations and topics).
// BENCH_INGRESS_ENV="APPEND_LINGER_MS=2 ..." adds settings to the ingress's environment, to compare them.
// BENCH_PATCH_PEER=0 leaves the CRUD peer out: the same targets as before it existed, so a run is
// comparable with one at an older commit (its synchronous commits also load the shared Postgres).
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { locationEventTypes, newEvent, topics } from '@hub/events';
import { objectKey, pathSubject } from '@hub/modules';
import { setRoutingRule } from '@hub/registry';
import { postgresReadModelStore, postgresRegistryStore } from '@hub/store';
import { authHeader, createTestStack, repoRoot } from '@hub/testing';
import { benchPlatform211, cpuSeconds, load, postgresCpuSeconds, onboardForBench, pairedRatio, percentile, printTable, rssMiB, startNode, summarize, type LoadResult } from './load.ts';
import { printFigures, type Figure } from './figures.ts';
import { paced, type PacedResult } from './paced.ts';
import { patchKinds, patchRequest, type PatchKind } from './patch-requests.ts';

const seconds = Number(process.argv[2] ?? 10);
const connections = Number(process.argv[3] ?? 50);
const rounds = Number(process.argv[4] ?? 3);
// Steady state, as in production: the broker's JVM compiles its hot paths during the first tens of
// seconds of load (its CPU per event falls about fourfold), so every target is warmed before rounds.
const warmupSeconds = Number(process.argv[5] ?? 20);
const locations = 1000;
/** BENCH_INGRESS_ENV's "A=1 B=2" as { A: '1', B: '2' }; a word without "=" is refused, not guessed at. */
function ingressSettings(text = ''): Record<string, string> {
  return Object.fromEntries(
    text.split(/\s+/).filter(Boolean).map((pair) => {
      const at = pair.indexOf('=');
      if (at <= 0) throw new Error(`BENCH_INGRESS_ENV takes NAME=value words, not ${JSON.stringify(pair)}`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
}
// Read before anything starts: a refusal must not leave services running.
const ingressEnv = ingressSettings(process.env['BENCH_INGRESS_ENV']);
const stack = await createTestStack('bench_patch');
const template = JSON.parse(readFileSync(join(repoRoot, '..', 'shared', 'ocpi-2.2.1', 'examples', 'location_example.json'), 'utf8')) as Record<string, unknown>;
const { cpoToken } = await onboardForBench(stack, '', { cpo: { countryCode: 'NL', partyId: 'BEN' }, emsp: { countryCode: 'NL', partyId: 'EMB' } });

// An OCPI 2.1.1 CPO beside it (docs/reference/version-mapping.md): its PATCHes are translated at the edge.
const cpo211Token = await benchPlatform211(stack, { countryCode: 'NL', partyId: 'OLD' });
await setRoutingRule({ store: postgresRegistryStore(stack.pool), source: 'bench', actor: 'bench' }, { emsp: { countryCode: 'NL', partyId: 'EMB' }, cpo: { countryCode: 'NL', partyId: 'OLD' }, enabled: true });
const events = ['BEN', 'OLD'].flatMap((partyId) =>
  Array.from({ length: locations }, (_, n) => {
    const id = `LOC-${n}`;
    const path = { countryCode: 'NL', partyId, id };
    return newEvent({ type: locationEventTypes.locationPut, source: 'bench', subject: pathSubject(path), key: objectKey(path), data: { ...template, country_code: 'NL', party_id: partyId, id } });
  }),
);
await stack.eventLog.append(topics.locations, events);
const projector = await startNode(join(repoRoot, 'services', 'projector', 'src', 'main.ts'), [], stack.env({ LOG_LEVEL: 'info', NODE_OPTIONS: process.env['BENCH_NODE_OPTIONS'] ?? '' }), /projector running/);
const store = postgresReadModelStore(stack.pool);
while ([...(await store.positions('locations')).values()].reduce((a, b) => a + b, 0n) < BigInt(events.length)) await new Promise((r) => setTimeout(r, 100));
await store.maintain('locations');

const hello = await startNode(join(repoRoot, 'bench', 'hello-server.ts'), ['0'], {}, /listening \d+/);
const helloPort = Number(/listening (\d+)/.exec(hello.line)?.[1]);
const ingress = await startNode(
  join(repoRoot, 'services', 'ingress', 'src', 'main.ts'),
  [],
  stack.env({ HUB_PORT: '0', ACCESS_LOG: 'errors', LOG_LEVEL: 'info', NODE_OPTIONS: process.env['BENCH_NODE_OPTIONS'] ?? '', ...ingressEnv }),
  /ingress listening/,
);
const hubPort = Number(/"port":(\d+)/.exec(ingress.line)?.[1]);
const baselineCheckout = process.env['BENCH_BASELINE_CHECKOUT'];
const baseline = baselineCheckout
  ? await startNode(join(baselineCheckout, 'services', 'ingress', 'src', 'main.ts'), [], stack.env({ HUB_PORT: '0', ACCESS_LOG: 'errors', LOG_LEVEL: 'info' }), /ingress listening/)
  : undefined;
const baselinePort = Number(/"port":(\d+)/.exec(baseline?.line ?? '')?.[1]);
// The peer's table starts as the hub's read model: the same 1,000 Location documents.
const peer = await startNode(join(repoRoot, 'bench', 'crud-peer.ts'), ['0'], stack.env({}), /listening \d+/);
const peerPort = Number(/listening (\d+)/.exec(peer.line)?.[1]);
await stack.pool.query(
  `insert into peer_locations (country_code, party_id, id, last_updated, document)
   select country_code, party_id, id, last_updated, document::jsonb from locations
    where generation = (select active from read_model_generations where model = 'locations') and party_id = 'BEN'`,
);
await stack.pool.query('analyze peer_locations');
// The hub's CPU per request counts the ingress, the projector and the broker (Postgres not included).
const hubPids = [ingress.child.pid ?? 0, projector.child.pid ?? 0, Number(process.env['TEST_BROKER_PID'] ?? 0)].filter((pid) => pid > 0);
const headers = { authorization: authHeader(cpoToken), 'content-type': 'application/json' };
const total = (offsets: ReadonlyMap<number, bigint>) => [...offsets.values()].reduce((a, b) => a + b, 0n);
/**
 * Events on the locations topic the read model has not applied yet. The head is read again on every
 * poll: requests still in flight when autocannon stops its round are appended after it.
 */
const projectorBehind = async () => total(await stack.eventLog.latestOffsets(topics.locations)) - total(await store.positions('locations'));
/** How far behind each hub round left the projector, and how long it took to catch up. */
const catchUps: { behind: number; ms: number }[] = [];
const catchUp = async () => {
  const from = performance.now();
  const behind = await projectorBehind();
  let left = behind;
  // Polled every 5 ms, as the ingress's read-your-writes wait (projectionWait) does, so a short catch-up is not the poll's interval.
  while (left > 0n && performance.now() - from < 60_000) {
    await new Promise((r) => setTimeout(r, 5));
    left = await projectorBehind();
  }
  if (left > 0n) process.stdout.write(`projector still ${left} events behind 60 s after a round: its catch-up is not counted in full\n`);
  catchUps.push({ behind: Number(behind), ms: performance.now() - from });
};
let n = 0;
/** A durable PATCH of `kind` spread over the locations. */
const patchTarget = (label: string, kind: PatchKind, port = hubPort, serverPids = hubPids, version: '2.1.1' | '2.2.1' = '2.2.1') => ({
  label,
  url: `http://127.0.0.1:${port}/ocpi/${version}/locations/${version === '2.1.1' ? 'NL/OLD' : 'NL/BEN'}/LOC-0${patchKinds[kind].below}`,
  options: {
    method: 'PATCH' as const,
    headers: version === '2.1.1' ? { ...headers, authorization: `Token ${cpo211Token}` } : headers,
    serverPids,
    ...(port === peerPort ? {} : { settle: catchUp }),
    setupRequest: (req: { path: string; body?: string }) => Object.assign(req, patchRequest(kind, ++n, locations, version)),
  },
});
const withPeer = process.env['BENCH_PATCH_PEER'] !== '0';
const baselinePids = [baseline?.child.pid ?? 0, ...hubPids.slice(1)];
/** The baseline checkout's row right after this checkout's, so both meet the same machine state. */
const withBaseline = (t: ReturnType<typeof patchTarget>, kind: PatchKind) => (baseline ? [t, patchTarget(`baseline hub PATCH ${kind}`, kind, baselinePort, baselinePids)] : [t]);
const targets = [
  { label: 'bare express GET /hello', url: `http://127.0.0.1:${helloPort}/hello`, options: { serverPids: [hello.child.pid ?? 0] } },
  // Each 2.1.1 row right after its 2.2.1 row, so both meet the same machine state (the ratio is paired per round).
  ...withBaseline(patchTarget('hub PATCH EVSE status', 'EVSE status'), 'EVSE status'),
  patchTarget('hub 2.1.1 CPO PATCH EVSE status', 'EVSE status', hubPort, hubPids, '2.1.1'),
  patchTarget('CRUD peer PATCH EVSE status', 'EVSE status', peerPort, [peer.child.pid ?? 0]),
  ...withBaseline(patchTarget('hub PATCH connector', 'connector'), 'connector'),
  patchTarget('hub 2.1.1 CPO PATCH connector', 'connector', hubPort, hubPids, '2.1.1'),
  patchTarget('CRUD peer PATCH connector', 'connector', peerPort, [peer.child.pid ?? 0]),
].filter((t) => withPeer || !t.label.startsWith('CRUD peer'));
// the ingress's RSS at full PATCH load (sampled during the hub's rounds).
let ingressRssMax = 0;
let ingressRssEnd = 0;
const runs = new Map<string, LoadResult[]>(targets.map((t) => [t.label, []]));
const pacedAtPeerRate = new Map<string, { rate: number; result: PacedResult; cpuMicros: number[] }>();
try {
  for (const t of targets) await load('warm-up', t.url, { seconds: t.label.startsWith('bare') ? 2 : warmupSeconds / 2, connections, ...t.options });
  catchUps.length = 0;
  for (let round = 0; round < rounds; round++) {
    for (const t of targets) {
      const sampler = setInterval(() => (ingressRssMax = Math.max(ingressRssMax, rssMiB(ingress.child.pid))), 500);
      runs.get(t.label)?.push(await load(t.label, t.url, { seconds, connections, ...t.options }));
      clearInterval(sampler);
      if (t.label.startsWith('hub')) ingressRssEnd = rssMiB(ingress.child.pid);
    }
  }
  // The target is the peer's throughput "with p99 <= 20 ms". Closed-loop, 50 connections
  // at saturation queue by Little's law (mean latency = connections / throughput), so the p99 above is
  // the queue's; this phase offers the hub the load the peer tops out at (its median req/s, as a steady
  // open-loop rate over at most as many connections: paced.ts) and measures the hub's p99 there, after
  // 3 s at that rate to settle (the projector's batches and the broker's fetches find their rhythm).
  for (const kind of withPeer ? (['EVSE status', 'connector'] as const) : []) {
    const target = targets.find((t) => t.label === `hub PATCH ${kind}`);
    const peerRate = Number(process.env['BENCH_PACED_RATE'] ?? 0) || percentile((runs.get(`CRUD peer PATCH ${kind}`) ?? []).map((r) => r.requestsPerSecond), 50);
    if (!target || peerRate <= 0) continue;
    const settleSeconds = 3;
    const cpuNow = () => [...hubPids.map((pid) => cpuSeconds(pid)), postgresCpuSeconds()];
    const cpuBefore = cpuNow();
    const result = await paced(`hub PATCH ${kind} at the peer's rate`, target.url, peerRate, { seconds, connections, settleSeconds, headers, kind, locations });
    // At a moderate rate fewer PATCHes share each produce request, fetch and commit than at
    // saturation, so a PATCH costs more CPU there: per process, per PATCH due over the settling
    // seconds too (the loader keeps to the rate: its achieved rate is printed beside).
    const cpuMicros = cpuNow().map((after, i) => ((after - (cpuBefore[i] ?? 0)) * 1e6) / (peerRate * (seconds + settleSeconds)));
    pacedAtPeerRate.set(kind, { rate: peerRate, result, cpuMicros });
  }
} finally {
  for (const p of [hello, ingress, projector, peer, ...(baseline ? [baseline] : [])]) p.child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 1000));
  await stack.cleanup();
}
const summary = summarize(targets.map((t) => t.label), runs);
process.stdout.write(`medians of ${rounds} alternating rounds; req/s per round: ${targets.map((t) => `${t.label}: ${(runs.get(t.label) ?? []).map((r) => r.requestsPerSecond.toFixed(0)).join('/')}`).join('; ')}\n`);
printTable(summary);
const bareLabel = summary[0]?.label ?? '';
const slug = (label: string) => label.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '');
const figures: Record<string, Figure> = {};
for (const r of summary) {
  figures[`${slug(r.label)}_req_per_s`] = r.requestsPerSecond;
  figures[`${slug(r.label)}_p99_ms`] = r.p99;
  figures[`${slug(r.label)}_cpu_us_per_req`] = r.cpuMicrosPerRequest;
  figures[`${slug(r.label)}_errors`] = r.errors + r.non2xx;
}
for (const r of summary.slice(1)) {
  const throughput = pairedRatio(runs, r.label, bareLabel, (x) => x.requestsPerSecond);
  const ofMedians = r.requestsPerSecond / (summary[0]?.requestsPerSecond ?? Number.NaN);
  process.stdout.write(`${r.label}: ${(100 * throughput).toFixed(0)}% of bare express's req/s (median of per-round ratios; ratio of medians ${(100 * ofMedians).toFixed(0)}%)\n`);
}
// The hub against its CRUD peer: the median of per-round ratios of each PATCH kind (target >= 1.0x).
for (const kind of withPeer ? ['EVSE status', 'connector'] : []) {
  const ratio = pairedRatio(runs, `hub PATCH ${kind}`, `CRUD peer PATCH ${kind}`, (x) => x.requestsPerSecond);
  figures[`hub_to_peer_${slug(kind)}_ratio`] = ratio;
  process.stdout.write(`hub PATCH ${kind}: ${ratio.toFixed(2)}x the CRUD peer's req/s (median of per-round ratios)\n`);
  const paced = pacedAtPeerRate.get(kind);
  if (paced) {
    figures[`hub_at_peer_rate_${slug(kind)}_p99_ms`] = paced.result.p99;
    figures[`hub_at_peer_rate_${slug(kind)}_req_per_s`] = paced.result.requestsPerSecond;
    process.stdout.write(`hub PATCH ${kind} paced at the CRUD peer's ${paced.rate.toFixed(0)} req/s: ${paced.result.requestsPerSecond.toFixed(0)} req/s achieved, p50 ${paced.result.p50.toFixed(1)} ms, p99 ${paced.result.p99.toFixed(1)} ms (${paced.result.errors + paced.result.non2xx} errors)\n`);
    const names = ['ingress', 'projector', 'broker'].slice(0, hubPids.length).concat('Postgres');
    names.forEach((name, i) => (figures[`hub_at_peer_rate_${slug(kind)}_${name.toLowerCase()}_cpu_us_per_req`] = paced.cpuMicros[i] ?? Number.NaN));
    const sum = paced.cpuMicros.reduce((a, b) => a + b, 0);
    figures[`hub_at_peer_rate_${slug(kind)}_loader_cpu_us_per_req`] = paced.result.loaderCpuMicrosPerRequest;
    process.stdout.write(`  CPU µs per PATCH at that rate: ${names.map((name, i) => `${name} ${(paced.cpuMicros[i] ?? Number.NaN).toFixed(0)}`).join(', ')} (sum ${sum.toFixed(0)}); the paced loader itself ${paced.result.loaderCpuMicrosPerRequest.toFixed(0)}\n`);
  }
}
// This checkout against the baseline checkout, same rounds: CPU per request and req/s (issue target: within 5%).
for (const kind of baseline ? ['EVSE status', 'connector'] : []) {
  const cpu = pairedRatio(runs, `hub PATCH ${kind}`, `baseline hub PATCH ${kind}`, (x) => x.cpuMicrosPerRequest);
  const throughput = pairedRatio(runs, `hub PATCH ${kind}`, `baseline hub PATCH ${kind}`, (x) => x.requestsPerSecond);
  figures[`to_baseline_${slug(kind)}_cpu_ratio`] = cpu;
  figures[`to_baseline_${slug(kind)}_req_ratio`] = throughput;
  process.stdout.write(`hub PATCH ${kind}: ${cpu.toFixed(3)}x the baseline checkout's CPU per request, ${throughput.toFixed(3)}x its req/s (median of per-round ratios)\n`);
}
// A 2.1.1 CPO's PATCH against a 2.2.1 one in the same run: CPU per request (target at most 1.10x).
for (const kind of ['EVSE status', 'connector']) {
  const ratio = pairedRatio(runs, `hub 2.1.1 CPO PATCH ${kind}`, `hub PATCH ${kind}`, (x) => x.cpuMicrosPerRequest);
  figures[`cpo211_to_221_${slug(kind)}_cpu_ratio`] = ratio;
  process.stdout.write(`hub 2.1.1 CPO PATCH ${kind}: ${ratio.toFixed(2)}x the CPU per request of a 2.2.1 CPO's (median of per-round ratios)\n`);
}
// Read-your-writes waits for the projector (READ_YOUR_WRITES_TIMEOUT_MS, 2 s by default): a GET or a
// child PATCH of a new object during the overload waits for about this many events to be applied; the
// catch-up after a round runs with the ingress idle, so it is the short end of that wait.
const behindEvents = catchUps.map((c) => c.behind);
const catchUpMs = catchUps.map((c) => c.ms);
if (catchUps.length > 0) {
  figures['projector_behind_after_round_max_events'] = Math.max(...behindEvents);
  figures['projector_catch_up_after_round_max_ms'] = Math.max(...catchUpMs);
  process.stdout.write(`projector at the end of each saturated hub round: ${percentile(behindEvents, 50).toFixed(0)} events behind (median; max ${Math.max(...behindEvents)}), caught up ${percentile(catchUpMs, 50).toFixed(0)} ms later (median; max ${Math.max(...catchUpMs).toFixed(0)})\n`);
}
process.stdout.write(`ingress RSS at full PATCH load: max ${ingressRssMax.toFixed(0)} MiB, ${ingressRssEnd.toFixed(0)} MiB after the last hub round\n`);
process.stdout.write(`(${seconds} s per run after ${warmupSeconds} s of warm-up, ${connections} connections, ${new Date().toISOString()}, node ${process.version})\n`);
printFigures({ ...figures, ingress_rss_max_mib: ingressRssMax, ingress_rss_end_mib: ingressRssEnd, seconds_per_run: seconds, connections, rounds });
process.exit(0);
