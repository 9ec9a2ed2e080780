// Real time (item 3): hub-added latency of token authorization in both directions
// (eMSP -> hub -> CPO against the same simulated CPO called directly; CPO -> hub -> eMSP against the
// same simulated eMSP's tokens sender called directly), at a steady rate, the four interleaved so all
// see the same machine, and the command round trip (eMSP request -> CPO -> callback -> eMSP response_url).
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
// The eMSP's tokens sender (where a CPO's authorization goes): an override applies to it as well.
await overrideEndpoint(deps, { party: { countryCode: 'DE', partyId: 'EMA', role: 'EMSP' }, module: 'tokens', url: `${emspSim.baseUrl}/ocpi/2.2.1/tokens` });
const dispatcher = await startNode(join(repoRoot, 'services', 'dispatcher', 'src', 'main.ts'), [], { ...env, LOG_LEVEL: 'info' }, /dispatcher running/);
await setRoutingRule(deps, { emsp: { countryCode: 'DE', partyId: 'EMA' }, cpo: { countryCode: 'BE', partyId: 'BEC' }, enabled: true });
const ingress = await startNode(join(repoRoot, 'services', 'ingress', 'src', 'main.ts'), [], { ...env, LOG_LEVEL: 'info' }, /ingress listening/);
const hub = `http://127.0.0.1:${/"port":(\d+)/.exec(ingress.line)?.[1]}`;

interface Target {
  readonly method: 'PUT' | 'POST';
  readonly url: string;
  readonly auth: string;
  readonly extra: Record<string, string>;
}
const viaHub: Target = { method: 'PUT', url: `${hub}/ocpi/2.2.1/tokens/DE/EMA/TOKEN/authorize`, auth: authHeader(tokens['EMSP'] ?? ''), extra: { 'ocpi-to-country-code': 'BE', 'ocpi-to-party-id': 'BEC' } };
const direct: Target = { method: 'PUT', url: `${cpoSim.baseUrl}/ocpi/2.2.1/tokens/DE/EMA/TOKEN/authorize`, auth: authHeader(cpoSim.token), extra: {} };
// CPO-initiated (mod_tokens.asciidoc, Sender interface POST): the eMSP named by OCPI-to, as above.
const cpoViaHub: Target = { method: 'POST', url: `${hub}/ocpi/2.2.1/tokens/TOKEN/authorize`, auth: authHeader(tokens['CPO'] ?? ''), extra: { 'ocpi-to-country-code': 'DE', 'ocpi-to-party-id': 'EMA' } };
const cpoDirect: Target = { method: 'POST', url: `${emspSim.baseUrl}/ocpi/2.2.1/tokens/TOKEN/authorize`, auth: authHeader(emspSim.token), extra: {} };
const timed = async (t: Target): Promise<number> => {
  const started = performance.now();
  const res = await request(t.url, { method: t.method, headers: { authorization: t.auth, ...t.extra } });
  const body = (await res.body.json()) as { data?: { allowed?: string } };
  if (body.data?.allowed !== 'ALLOWED') throw new Error(`unexpected answer ${JSON.stringify(body)}`);
  return performance.now() - started;
};
const hubTimes: number[] = [];
const directTimes: number[] = [];
const cpoHubTimes: number[] = [];
const cpoDirectTimes: number[] = [];
const commandTimes: number[] = [];
try {
  for (let i = 0; i < 200; i++) await Promise.all([timed(viaHub), timed(direct), timed(cpoViaHub), timed(cpoDirect)]); // warm-up
  const rotation: Array<[Target, number[]]> = [[viaHub, hubTimes], [direct, directTimes], [cpoViaHub, cpoHubTimes], [cpoDirect, cpoDirectTimes]];
  const deadline = Date.now() + seconds * 1000;
  const pending: Array<Promise<unknown>> = [];
  let n = 0;
  while (Date.now() < deadline) {
    const tick = Date.now();
    for (let k = 0; k < rate / 100; k++) {
      // Rotate: a quarter each to the CPO and the eMSP, directly and through the hub, at the combined rate.
      const [target, times] = rotation[n++ % rotation.length] as [Target, number[]];
      pending.push(timed(target).then((ms) => times.push(ms)));
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
process.stdout.write(`eMSP -> CPO\n${line('CPO called directly', directTimes)}\n${line('through the hub    ', hubTimes)}\n`);
process.stdout.write(`CPO -> eMSP\n${line('eMSP called directly', cpoDirectTimes)}\n${line('through the hub     ', cpoHubTimes)}\n`);
process.stdout.write(`${line('command round trip (request -> CPO -> callback -> eMSP response_url), 10 concurrent', commandTimes)}, p95 ${percentile(commandTimes, 95).toFixed(1)} ms\n`);
const added = (via: number[], without: number[], p: number) => percentile(via, p) - percentile(without, p);
process.stdout.write(`hub-added latency, eMSP -> CPO: p50 ${added(hubTimes, directTimes, 50).toFixed(2)} ms, p99 ${added(hubTimes, directTimes, 99).toFixed(2)} ms (${rate} req/s in all for ${seconds} s, ${new Date().toISOString()})\n`);
process.stdout.write(`hub-added latency, CPO -> eMSP: p50 ${added(cpoHubTimes, cpoDirectTimes, 50).toFixed(2)} ms, p99 ${added(cpoHubTimes, cpoDirectTimes, 99).toFixed(2)} ms\n`);
printFigures({
  direct_p50_ms: percentile(directTimes, 50),
  direct_p99_ms: percentile(directTimes, 99),
  hub_p50_ms: percentile(hubTimes, 50),
  hub_p99_ms: percentile(hubTimes, 99),
  hub_added_p50_ms: added(hubTimes, directTimes, 50),
  hub_added_p99_ms: added(hubTimes, directTimes, 99),
  cpo_initiated_direct_p50_ms: percentile(cpoDirectTimes, 50),
  cpo_initiated_direct_p99_ms: percentile(cpoDirectTimes, 99),
  cpo_initiated_hub_p50_ms: percentile(cpoHubTimes, 50),
  cpo_initiated_hub_p99_ms: percentile(cpoHubTimes, 99),
  cpo_initiated_hub_added_p50_ms: added(cpoHubTimes, cpoDirectTimes, 50),
  cpo_initiated_hub_added_p99_ms: added(cpoHubTimes, cpoDirectTimes, 99),
  command_round_trip_p50_ms: percentile(commandTimes, 50),
  command_round_trip_p95_ms: percentile(commandTimes, 95),
  rate_req_per_s: rate,
  seconds,
});
process.exit(0);
