// Durable status PATCHes (issue #3): PATCH an EVSE's status and a connector on the connector path,
// each answered only after Kafka acknowledged the event with acks=all, against a bare express "hello"
// in the same run (autocannon on loopback, targets alternating, medians of the rounds). The projector
// runs, as in production, so existence checks read a live read model.
// Run: npm run bench -- location-patch [seconds=10] [connections=50] [rounds=3] [warm-up seconds=20]
// BENCH_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=DIR" profiles the ingress (see README, Benchmarks).
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { newEvent, topics } from '@hub/events';
import { locationEventTypes, objectKey, pathSubject } from '@hub/read-models';
import { postgresReadModelStore } from '@hub/store';
import { authHeader, createTestStack, repoRoot } from '@hub/testing';
import { load, onboardForBench, pairedRatio, printTable, startNode, summarize, type LoadResult } from './load.ts';

const seconds = Number(process.argv[2] ?? 10);
const connections = Number(process.argv[3] ?? 50);
const rounds = Number(process.argv[4] ?? 3);
// Steady state, as in production: the broker's JVM compiles its hot paths during the first tens of
// seconds of load (its CPU per event falls about fourfold), so every target is warmed before rounds.
const warmupSeconds = Number(process.argv[5] ?? 20);
const locations = 1000;
const stack = await createTestStack('bench_patch');
const template = JSON.parse(readFileSync(join(repoRoot, '..', 'shared', 'ocpi-2.2.1', 'examples', 'location_example.json'), 'utf8')) as Record<string, unknown>;
const { cpoToken } = await onboardForBench(stack, '', { cpo: { countryCode: 'NL', partyId: 'BEN' }, emsp: { countryCode: 'NL', partyId: 'EMB' } });

const events = Array.from({ length: locations }, (_, n) => {
  const id = `LOC-${n}`;
  const path = { countryCode: 'NL', partyId: 'BEN', id };
  return newEvent({ type: locationEventTypes.locationPut, source: 'bench', subject: pathSubject(path), key: objectKey(path), data: { ...template, country_code: 'NL', party_id: 'BEN', id } });
});
await stack.eventLog.append(topics.locations, events);
const projector = await startNode(join(repoRoot, 'services', 'projector', 'src', 'main.ts'), [], stack.env({ LOG_LEVEL: 'info' }), /projector running/);
const store = postgresReadModelStore(stack.pool);
while ([...(await store.positions('locations')).values()].reduce((a, b) => a + b, 0n) < BigInt(locations)) await new Promise((r) => setTimeout(r, 100));
await store.maintain('locations');

const hello = await startNode(join(repoRoot, 'bench', 'hello-server.ts'), ['0'], {}, /listening \d+/);
const helloPort = Number(/listening (\d+)/.exec(hello.line)?.[1]);
const ingress = await startNode(
  join(repoRoot, 'services', 'ingress', 'src', 'main.ts'),
  [],
  stack.env({ HUB_PORT: '0', ACCESS_LOG: 'errors', LOG_LEVEL: 'info', NODE_OPTIONS: process.env['BENCH_NODE_OPTIONS'] ?? '' }),
  /ingress listening/,
);
const hubPort = Number(/"port":(\d+)/.exec(ingress.line)?.[1]);
// The hub's CPU per request counts the ingress, the projector and the broker (Postgres not included).
const hubPids = [ingress.child.pid ?? 0, projector.child.pid ?? 0, Number(process.env['TEST_BROKER_PID'] ?? 0)].filter((pid) => pid > 0);
const headers = { authorization: authHeader(cpoToken), 'content-type': 'application/json' };
const statuses = ['AVAILABLE', 'CHARGING', 'BLOCKED', 'OUTOFORDER'];
let n = 0;
/** A durable PATCH spread over the locations: `below` is the EVSE (or connector) path under a location. */
const patchTarget = (label: string, below: string, fields: (n: number) => Record<string, unknown>) => ({
  label,
  url: `http://127.0.0.1:${hubPort}/ocpi/2.2.1/locations/NL/BEN/LOC-0${below}`,
  options: {
    method: 'PATCH' as const,
    headers,
    serverPids: hubPids,
    setupRequest: (req: { path: string; body?: string }) => {
      n++;
      req.path = `/ocpi/2.2.1/locations/NL/BEN/LOC-${n % locations}${below}`;
      req.body = JSON.stringify({ ...fields(n), last_updated: new Date().toISOString() });
      return req;
    },
  },
});
const targets = [
  { label: 'bare express GET /hello', url: `http://127.0.0.1:${helloPort}/hello`, options: { serverPids: [hello.child.pid ?? 0] } },
  patchTarget('hub PATCH EVSE status', '/3256', (i) => ({ status: statuses[i % 4] })),
  patchTarget('hub PATCH connector', '/3256/1', (i) => ({ tariff_ids: [`T${i % 7}`] })),
];
const runs = new Map<string, LoadResult[]>(targets.map((t) => [t.label, []]));
try {
  for (const t of targets) await load('warm-up', t.url, { seconds: t.label.startsWith('hub') ? warmupSeconds / 2 : 2, connections, ...t.options });
  for (let round = 0; round < rounds; round++) {
    for (const t of targets) runs.get(t.label)?.push(await load(t.label, t.url, { seconds, connections, ...t.options }));
  }
} finally {
  for (const p of [hello, ingress, projector]) p.child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 1000));
  await stack.cleanup();
}
const summary = summarize(targets.map((t) => t.label), runs);
process.stdout.write(`medians of ${rounds} alternating rounds; req/s per round: ${targets.map((t) => `${t.label}: ${(runs.get(t.label) ?? []).map((r) => r.requestsPerSecond.toFixed(0)).join('/')}`).join('; ')}\n`);
printTable(summary);
const bareLabel = summary[0]?.label ?? '';
for (const r of summary.slice(1)) {
  const throughput = pairedRatio(runs, r.label, bareLabel, (x) => x.requestsPerSecond);
  const ofMedians = r.requestsPerSecond / (summary[0]?.requestsPerSecond ?? Number.NaN);
  process.stdout.write(`${r.label}: ${(100 * throughput).toFixed(0)}% of bare express's req/s (median of per-round ratios; ratio of medians ${(100 * ofMedians).toFixed(0)}%)\n`);
}
process.stdout.write(`(${seconds} s per run after ${warmupSeconds} s of warm-up, ${connections} connections, ${new Date().toISOString()}, node ${process.version})\n`);
process.exit(0);
