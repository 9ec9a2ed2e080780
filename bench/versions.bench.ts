// Throughput and p99 of an authenticated GET /ocpi/2.2.1 against a bare express "hello", in the same
// run on this machine (issue: target >= 70% of bare). Both servers run as their own process; the
// load generator (autocannon) runs here. Run: npm run bench -- versions [seconds] [connections]
import { join } from 'node:path';
import { generateCredentialsToken, hashCredentialsToken } from '@hub/ocpi';
import { registerParty } from '@hub/registry';
import { postgresRegistryStore } from '@hub/store';
import { authHeader, createTestStack, repoRoot } from '@hub/testing';
import { load, printTable, startNode, type LoadResult } from './load.ts';

const seconds = Number(process.argv[2] ?? 10);
const connections = Number(process.argv[3] ?? 50);
const stack = await createTestStack('bench_versions');
const store = postgresRegistryStore(stack.pool);
const { platformId, initialToken } = await registerParty({ store, source: 'bench', actor: 'bench' }, { party: { countryCode: 'NL', partyId: 'BEN', role: 'CPO' }, name: 'Bench' });
const hubToken = generateCredentialsToken();
await store.saveCredentials(
  {
    platformId,
    presentedTokenHash: hashCredentialsToken(initialToken),
    newHubTokenHash: hashCredentialsToken(hubToken),
    partnerTokenSealed: Buffer.from('unused'),
    versionsUrl: 'https://bench.invalid/ocpi/versions',
    version: '2.2.1',
    endpoints: [],
    businessDetails: [],
    outbox: [],
  },
  'register',
);

const results: LoadResult[] = [];
const hello = await startNode(join(repoRoot, 'bench', 'hello-server.ts'), ['0'], {}, /listening \d+/);
const helloPort = Number(/listening (\d+)/.exec(hello.line)?.[1]);
const ingressFor = async (accessLog: string) => {
  const env = stack.env({ HUB_PORT: '0', ACCESS_LOG: accessLog, LOG_LEVEL: 'info' });
  const started = await startNode(join(repoRoot, 'services', 'ingress', 'src', 'main.ts'), [], env, /ingress listening/);
  const port = Number(/"port":(\d+)/.exec(started.line)?.[1]);
  return { ...started, port };
};
try {
  // Warm-up, then the measured runs, baseline first.
  await load('warm-up', `http://127.0.0.1:${helloPort}/hello`, { seconds: 2, connections });
  results.push(await load('bare express GET /hello', `http://127.0.0.1:${helloPort}/hello`, { seconds, connections }));
  for (const accessLog of ['errors', 'all']) {
    const ingress = await ingressFor(accessLog);
    const url = `http://127.0.0.1:${ingress.port}/ocpi/2.2.1`;
    const headers = { authorization: authHeader(hubToken) };
    await load('warm-up', url, { seconds: 2, connections, headers });
    results.push(await load(`hub GET /ocpi/2.2.1 (ACCESS_LOG=${accessLog})`, url, { seconds, connections, headers }));
    ingress.child.kill('SIGTERM');
  }
} finally {
  hello.child.kill('SIGTERM');
  await stack.cleanup();
}
printTable(results);
const bare = results[0]?.requestsPerSecond ?? 1;
for (const r of results.slice(1)) process.stdout.write(`${r.label}: ${((100 * r.requestsPerSecond) / bare).toFixed(0)}% of bare express\n`);
process.stdout.write(`(${seconds} s per run, ${connections} connections, ${new Date().toISOString()}, node ${process.version})\n`);
process.exit(0);
