// Real time (issue #5): hub-added latency of token authorization (the same simulated CPO called
// directly and through the hub, at a steady rate, interleaved so both see the same machine), and the
// command round trip (eMSP request -> CPO -> callback -> eMSP response_url).
// Run: npm run bench -- authorize [rate/s=200] [seconds=20] [commands=300]
import { join } from 'node:path';
import { request } from 'undici';
import { generateCredentialsToken, hashCredentialsToken } from '@hub/ocpi';
import { aesGcmTokenCipher, overrideEndpoint, registerParty, setRoutingRule } from '@hub/registry';
import { postgresRegistryStore } from '@hub/store';
import { authHeader, createTestStack, repoRoot, startPartnerSimulator } from '@hub/testing';
import { percentile, startNode } from './load.ts';
import { printFigures } from './figures.ts';

const rate = Number(process.argv[2] ?? 200);
const seconds = Number(process.argv[3] ?? 20);
const commandCount = Number(process.argv[4] ?? 300);
const stack = await createTestStack('bench_authorize');
const env = stack.env({ HUB_PORT: '0', LOG_LEVEL: 'warn', ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', RATE_LIMIT_AUTHORIZATIONS: '1000000', RATE_LIMIT_COMMANDS: '1000000' });
const cipher = aesGcmTokenCipher(Buffer.from(env['HUB_SECRET_KEY'] ?? '', 'base64'));
const store = postgresRegistryStore(stack.pool);
const deps = { store, source: 'bench', actor: 'bench' };
const cpoSim = await startPartnerSimulator();
const emspSim = await startPartnerSimulator();
const tokens: Record<string, string> = {};
for (const [cc, pid, role] of [['BE', 'BEC', 'CPO'], ['DE', 'EMA', 'EMSP']] as const) {
  const sim = role === 'CPO' ? cpoSim : emspSim;
  const { platformId, initialToken } = await registerParty(deps, { party: { countryCode: cc, partyId: pid, role }, name: pid });
  const hubToken = generateCredentialsToken();
  await store.saveCredentials(
    { platformId, presentedTokenHash: hashCredentialsToken(initialToken), newHubTokenHash: hashCredentialsToken(hubToken), partnerTokenSealed: cipher.seal(sim.token), versionsUrl: sim.versionsUrl, version: '2.2.1', endpoints: [], businessDetails: [], outbox: [] },
    'register',
  );
  tokens[role] = hubToken;
}
await overrideEndpoint(deps, { party: { countryCode: 'BE', partyId: 'BEC', role: 'CPO' }, module: 'tokens', url: `${cpoSim.baseUrl}/ocpi/2.2.1/tokens` });
await overrideEndpoint(deps, { party: { countryCode: 'BE', partyId: 'BEC', role: 'CPO' }, module: 'commands', url: `${cpoSim.baseUrl}/ocpi/2.2.1/commands` });
const dispatcher = await startNode(join(repoRoot, 'services', 'dispatcher', 'src', 'main.ts'), [], { ...env, LOG_LEVEL: 'info' }, /dispatcher running/);
await setRoutingRule(deps, { emsp: { countryCode: 'DE', partyId: 'EMA' }, cpo: { countryCode: 'BE', partyId: 'BEC' }, enabled: true });
const ingress = await startNode(join(repoRoot, 'services', 'ingress', 'src', 'main.ts'), [], { ...env, LOG_LEVEL: 'info' }, /ingress listening/);
const hub = `http://127.0.0.1:${/"port":(\d+)/.exec(ingress.line)?.[1]}`;

interface Target {
  readonly url: string;
  readonly auth: string;
  readonly extra: Record<string, string>;
}
const viaHub: Target = { url: `${hub}/ocpi/2.2.1/tokens/DE/EMA/TOKEN/authorize`, auth: authHeader(tokens['EMSP'] ?? ''), extra: { 'ocpi-to-country-code': 'BE', 'ocpi-to-party-id': 'BEC' } };
const direct: Target = { url: `${cpoSim.baseUrl}/ocpi/2.2.1/tokens/DE/EMA/TOKEN/authorize`, auth: authHeader(cpoSim.token), extra: {} };
const timed = async (t: Target): Promise<number> => {
  const started = performance.now();
  const res = await request(t.url, { method: 'PUT', headers: { authorization: t.auth, ...t.extra } });
  const body = (await res.body.json()) as { data?: { allowed?: string } };
  if (body.data?.allowed !== 'ALLOWED') throw new Error(`unexpected answer ${JSON.stringify(body)}`);
  return performance.now() - started;
};
const hubTimes: number[] = [];
const directTimes: number[] = [];
const commandTimes: number[] = [];
try {
  for (let i = 0; i < 200; i++) await Promise.all([timed(viaHub), timed(direct)]); // warm-up
  const deadline = Date.now() + seconds * 1000;
  const pending: Array<Promise<unknown>> = [];
  let n = 0;
  while (Date.now() < deadline) {
    const tick = Date.now();
    for (let k = 0; k < rate / 100; k++) {
      // Alternate: half the requests go direct, half through the hub, at the combined rate.
      pending.push(n++ % 2 === 0 ? timed(viaHub).then((ms) => hubTimes.push(ms)) : timed(direct).then((ms) => directTimes.push(ms)));
    }
    const wait = 10 - (Date.now() - tick);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  await Promise.all(pending);

  // Command round trips, 10 at a time: request -> CPO (answers ACCEPTED, then calls back) -> hub ->
  // dispatcher -> the eMSP's response_url.
  const token = { country_code: 'DE', party_id: 'EMA', uid: 'T', type: 'RFID', contract_id: 'C', issuer: 'bench', valid: true, whitelist: 'ALLOWED', last_updated: '2020-01-01T00:00:00Z' };
  let next = 0;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (next < commandCount) {
        const id = `cmd-${next++}`;
        const started = performance.now();
        const res = await request(`${hub}/ocpi/2.2.1/commands/START_SESSION`, {
          method: 'POST',
          headers: { authorization: authHeader(tokens['EMSP'] ?? ''), 'content-type': 'application/json', 'ocpi-to-country-code': 'BE', 'ocpi-to-party-id': 'BEC' },
          body: JSON.stringify({ response_url: `${emspSim.baseUrl}/ocpi/2.2.1/command-results/${id}`, token, location_id: 'LOC1' }),
        });
        const body = (await res.body.json()) as { data?: { result?: string } };
        if (body.data?.result !== 'ACCEPTED') throw new Error(`command refused: ${JSON.stringify(body)}`);
        for (;;) {
          const got = emspSim.received.find((r) => r.kind === 'command_result' && r.path.endsWith(`/${id}`));
          if (got) {
            commandTimes.push(got.at - started);
            break;
          }
          await new Promise((r) => setTimeout(r, 1));
        }
      }
    }),
  );
} finally {
  dispatcher.child.kill('SIGTERM');
  await emspSim.close();
  ingress.child.kill('SIGTERM');
  await cpoSim.close();
  await new Promise((r) => setTimeout(r, 500));
  await stack.cleanup();
}
const line = (label: string, xs: number[]) => `${label}: ${xs.length} requests, p50 ${percentile(xs, 50).toFixed(2)} ms, p99 ${percentile(xs, 99).toFixed(2)} ms`;
process.stdout.write(`${line('CPO called directly', directTimes)}\n${line('through the hub    ', hubTimes)}\n`);
process.stdout.write(`${line('command round trip (request -> CPO -> callback -> eMSP response_url), 10 concurrent', commandTimes)}, p95 ${percentile(commandTimes, 95).toFixed(1)} ms\n`);
process.stdout.write(`hub-added latency: p50 ${(percentile(hubTimes, 50) - percentile(directTimes, 50)).toFixed(2)} ms, p99 ${(percentile(hubTimes, 99) - percentile(directTimes, 99)).toFixed(2)} ms (${rate} req/s in all for ${seconds} s, ${new Date().toISOString()})\n`);
printFigures({
  direct_p50_ms: percentile(directTimes, 50),
  direct_p99_ms: percentile(directTimes, 99),
  hub_p50_ms: percentile(hubTimes, 50),
  hub_p99_ms: percentile(hubTimes, 99),
  hub_added_p50_ms: percentile(hubTimes, 50) - percentile(directTimes, 50),
  hub_added_p99_ms: percentile(hubTimes, 99) - percentile(directTimes, 99),
  command_round_trip_p50_ms: percentile(commandTimes, 50),
  command_round_trip_p95_ms: percentile(commandTimes, 95),
  rate_req_per_s: rate,
  seconds,
});
process.exit(0);
