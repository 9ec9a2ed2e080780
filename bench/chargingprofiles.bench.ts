// ChargingProfiles (mod_charging_profiles.asciidoc, Receiver interface PUT): hub-added latency of an
// eMSP's SetChargingProfile, through the hub (session lookup, routing, request row, two events, the
// forward to the CPO) against the same simulated CPO called directly, interleaved at a steady rate so
// both see the same machine; and the result round trip (PUT -> CPO -> hub callback -> dispatcher ->
// the eMSP's response_url). As bench/authorize.bench.ts.
// Run: npm run bench -- chargingprofiles [rate/s=20] [seconds=20] [round trips=300] (each request through the
// hub makes two durable Kafka appends and three Postgres writes, and its result a callback and a delivery:
// the default rate keeps a two-core machine below saturation, so the figures are latency, not queueing).
import { join } from 'node:path';
import { request } from 'undici';
import { generateCredentialsToken, hashCredentialsToken } from '@hub/ocpi';
import { aesGcmTokenCipher, overrideEndpoint, registerParty, setRoutingRule } from '@hub/registry';
import { postgresDeliveryStore, postgresRegistryStore } from '@hub/store';
import { authHeader, createTestStack, repoRoot, startPartnerSimulator } from '@hub/testing';
import { percentile, startNode } from './load.ts';
import { printFigures } from './figures.ts';

const rate = Number(process.argv[2] ?? 20);
const seconds = Number(process.argv[3] ?? 20);
const roundTrips = Number(process.argv[4] ?? 300);
const stack = await createTestStack('bench_chargingprofiles');
const env = stack.env({ HUB_PORT: '0', LOG_LEVEL: 'warn', ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', RATE_LIMIT_CHARGING_PROFILES: '1000000' });
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
await overrideEndpoint(deps, { party: { countryCode: 'BE', partyId: 'BEC', role: 'CPO' }, module: 'chargingprofiles', url: `${cpoSim.baseUrl}/ocpi/2.2.1/chargingprofiles` });
await setRoutingRule(deps, { emsp: { countryCode: 'DE', partyId: 'EMA' }, cpo: { countryCode: 'BE', partyId: 'BEC' }, enabled: true });
// The session the profiles are for, as the hub holds it once delivered to the eMSP (a session row).
await postgresDeliveryStore(stack.pool).enqueue([
  { kind: 'session', emsp: { countryCode: 'DE', partyId: 'EMA' }, cpo: { countryCode: 'BE', partyId: 'BEC' }, objectId: 'S1', partition: 0, offset: '0', payload: { id: 'S1', last_updated: '2026-01-01T00:00:00Z' }, correlationId: undefined, eventTime: new Date().toISOString() },
]);
const dispatcher = await startNode(join(repoRoot, 'services', 'dispatcher', 'src', 'main.ts'), [], { ...env, LOG_LEVEL: 'info' }, /dispatcher running/);
const ingress = await startNode(join(repoRoot, 'services', 'ingress', 'src', 'main.ts'), [], { ...env, LOG_LEVEL: 'info' }, /ingress listening/);
const hub = `http://127.0.0.1:${/"port":(\d+)/.exec(ingress.line)?.[1]}`;

const chargingProfile = { charging_rate_unit: 'W', min_charging_rate: 1380, charging_profile_period: [{ start_period: 0, limit: 11000 }, { start_period: 1800, limit: 7400.5 }] };
let sent = 0;
const resultUrl = (id: string) => `${emspSim.baseUrl}/ocpi/2.2.1/chargingprofile-results/${id}`;
interface Target {
  readonly url: string;
  readonly auth: string;
}
const viaHub: Target = { url: `${hub}/ocpi/2.2.1/chargingprofiles/S1`, auth: authHeader(tokens['EMSP'] ?? '') };
const direct: Target = { url: `${cpoSim.baseUrl}/ocpi/2.2.1/chargingprofiles/S1`, auth: authHeader(cpoSim.token) };
const put = async (t: Target, id = `p-${sent++}`): Promise<number> => {
  const started = performance.now();
  const res = await request(t.url, { method: 'PUT', headers: { authorization: t.auth, 'content-type': 'application/json' }, body: JSON.stringify({ charging_profile: chargingProfile, response_url: resultUrl(id) }) });
  const body = (await res.body.json()) as { data?: { result?: string } };
  if (body.data?.result !== 'ACCEPTED') throw new Error(`unexpected answer ${JSON.stringify(body)}`);
  return performance.now() - started;
};
const hubTimes: number[] = [];
const directTimes: number[] = [];
const roundTripTimes: number[] = [];
try {
  for (let i = 0; i < 200; i++) await Promise.all([put(viaHub), put(direct)]); // warm-up
  const rotation: Array<[Target, number[]]> = [[viaHub, hubTimes], [direct, directTimes]];
  const deadline = Date.now() + seconds * 1000;
  const pending: Array<Promise<unknown>> = [];
  let n = 0;
  // Requests owed by the clock: a rate below 100/s sends on some 10 ms ticks only.
  const started = Date.now();
  while (Date.now() < deadline) {
    const tick = Date.now();
    const owed = Math.floor(((tick - started) / 1000) * rate) - n;
    for (let k = 0; k < owed; k++) {
      // Alternate: half to the CPO directly, half through the hub, at the combined rate.
      const [target, times] = rotation[n++ % rotation.length] as [Target, number[]];
      pending.push(put(target).then((ms) => times.push(ms)));
    }
    const wait = 10 - (Date.now() - tick);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  await Promise.all(pending);

  // Result round trips, 10 at a time: PUT -> CPO (answers ACCEPTED, then posts the ChargingProfileResult)
  // -> hub callback -> dispatcher -> the eMSP's response_url.
  let next = 0;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (next < roundTrips) {
        const id = `rt-${next++}`;
        const started = performance.now();
        await put(viaHub, id);
        for (;;) {
          const got = emspSim.received.find((r) => r.kind === 'charging_profile_result' && r.path.endsWith(`/${id}`));
          if (got) {
            roundTripTimes.push(got.at - started);
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
process.stdout.write(`PUT SetChargingProfile, eMSP -> CPO\n${line('CPO called directly', directTimes)}\n${line('through the hub    ', hubTimes)}\n`);
process.stdout.write(`${line('result round trip (PUT -> CPO -> callback -> eMSP response_url), 10 concurrent', roundTripTimes)}, p95 ${percentile(roundTripTimes, 95).toFixed(1)} ms\n`);
const added = (p: number) => percentile(hubTimes, p) - percentile(directTimes, p);
process.stdout.write(`hub-added latency of a PUT: p50 ${added(50).toFixed(2)} ms, p99 ${added(99).toFixed(2)} ms (${rate} req/s in all for ${seconds} s, achieved ${((hubTimes.length + directTimes.length) / seconds).toFixed(1)} req/s, ${new Date().toISOString()})\n`);
printFigures({
  direct_p50_ms: percentile(directTimes, 50),
  direct_p99_ms: percentile(directTimes, 99),
  hub_p50_ms: percentile(hubTimes, 50),
  hub_p99_ms: percentile(hubTimes, 99),
  hub_added_p50_ms: added(50),
  hub_added_p99_ms: added(99),
  result_round_trip_p50_ms: percentile(roundTripTimes, 50),
  result_round_trip_p95_ms: percentile(roundTripTimes, 95),
  rate_req_per_s: rate,
  seconds,
});
process.exit(0);
