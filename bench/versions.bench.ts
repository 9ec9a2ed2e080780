// Throughput and p99 of an authenticated GET /ocpi/2.2.1 against a bare express "hello", in the same
// run on this machine (issue: target >= 70% of bare). Both servers run as their own process; the
// load generator (autocannon) runs here. Run: npm run bench -- versions [seconds] [connections] [rounds]
import { join } from 'node:path';
import { authHeader, createTestStack, repoRoot } from '@hub/testing';
import { load, onboardForBench, pairedRatio, printTable, startNode, summarize, type LoadResult } from './load.ts';
import { printFigures, type Figure } from './figures.ts';

const seconds = Number(process.argv[2] ?? 10);
const connections = Number(process.argv[3] ?? 50);
const stack = await createTestStack('bench_versions');
const { cpoToken: hubToken } = await onboardForBench(stack, '', { cpo: { countryCode: 'NL', partyId: 'BEN' }, emsp: { countryCode: 'NL', partyId: 'EMB' } });
const hello = await startNode(join(repoRoot, 'bench', 'hello-server.ts'), ['0'], { NODE_OPTIONS: process.env['BENCH_NODE_OPTIONS'] ?? '' }, /listening \d+/);
const helloPort = Number(/listening (\d+)/.exec(hello.line)?.[1]);
const ingressFor = async (accessLog: string) => {
  // BENCH_NODE_OPTIONS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the ingress under load.
  const env = stack.env({ HUB_PORT: '0', ACCESS_LOG: accessLog, LOG_LEVEL: 'info', NODE_OPTIONS: process.env['BENCH_NODE_OPTIONS'] ?? '' });
  const started = await startNode(join(repoRoot, 'services', 'ingress', 'src', 'main.ts'), [], env, /ingress listening/);
  const port = Number(/"port":(\d+)/.exec(started.line)?.[1]);
  return { ...started, port };
};
const quiet = await ingressFor('errors');
const logged = await ingressFor('all');
const headers = { authorization: authHeader(hubToken) };
const pidOf = (p: { child: { pid?: number | undefined } }) => [p.child.pid ?? 0];
const targets = [
  { label: 'bare express GET /hello', url: `http://127.0.0.1:${helloPort}/hello`, headers: {}, serverPids: pidOf(hello) },
  { label: 'hub GET /ocpi/2.2.1, ACCESS_LOG=errors', url: `http://127.0.0.1:${quiet.port}/ocpi/2.2.1`, headers, serverPids: pidOf(quiet) },
  { label: 'hub GET /ocpi/2.2.1, ACCESS_LOG=all', url: `http://127.0.0.1:${logged.port}/ocpi/2.2.1`, headers, serverPids: pidOf(logged) },
];
// The machine is shared and noisy: targets alternate over several rounds and medians are compared.
const rounds = Number(process.argv[4] ?? 3);
const runs = new Map<string, LoadResult[]>(targets.map((t) => [t.label, []]));
try {
  for (const t of targets) await load('warm-up', t.url, { seconds: 2, connections, headers: t.headers });
  for (let round = 0; round < rounds; round++) {
    for (const t of targets) runs.get(t.label)?.push(await load(t.label, t.url, { seconds, connections, headers: t.headers, serverPids: t.serverPids }));
  }
} finally {
  for (const p of [hello, quiet, logged]) p.child.kill('SIGTERM');
  await stack.cleanup();
}
const summary = summarize(targets.map((t) => t.label), runs);
process.stdout.write(`medians of ${rounds} alternating rounds; per round req/s: ${targets.map((t) => `${t.label}: ${(runs.get(t.label) ?? []).map((r) => r.requestsPerSecond.toFixed(0)).join('/')}`).join('; ')}\n`);
printTable(summary);
const bare = summary[0];
const slug = (label: string) => label.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '');
const figures: Record<string, Figure> = {};
for (const r of summary) {
  figures[`${slug(r.label)}_req_per_s`] = r.requestsPerSecond;
  figures[`${slug(r.label)}_p99_ms`] = r.p99;
  figures[`${slug(r.label)}_cpu_us_per_req`] = r.cpuMicrosPerRequest;
}
for (const r of summary.slice(1)) {
  const throughput = pairedRatio(runs, r.label, bare?.label ?? '', (x) => x.requestsPerSecond);
  const cpu = pairedRatio(runs, bare?.label ?? '', r.label, (x) => x.cpuMicrosPerRequest);
  const ofMedians = r.requestsPerSecond / (bare?.requestsPerSecond ?? Number.NaN);
  const cpuOfMedians = (bare?.cpuMicrosPerRequest ?? Number.NaN) / r.cpuMicrosPerRequest;
  figures[`${slug(r.label)}_ratio_to_bare`] = throughput;
  process.stdout.write(
    `${r.label}: ${(100 * throughput).toFixed(0)}% of bare express's req/s (median of per-round ratios; ratio of medians ${(100 * ofMedians).toFixed(0)}%); ` +
      `${(100 * cpu).toFixed(0)}% by server CPU per request, bare µs / hub µs (ratio of medians ${(100 * cpuOfMedians).toFixed(0)}%)\n`,
  );
}
process.stdout.write(`(${seconds} s per run, ${connections} connections, ${new Date().toISOString()}, node ${process.version})\n`);
printFigures({ ...figures, seconds_per_run: seconds, connections, rounds });
process.exit(0);
