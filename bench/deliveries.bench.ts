// Session and CDR delivery (benchmarks), on the real stack with eMSP receivers as real HTTP
// servers in this process:
//   1. CPO session PUT -> eMSP receipt latency at a steady rate, spread over two eMSPs;
//   2. the same with a third eMSP hanging (never answering): the healthy eMSPs' latency;
//   3. CDR throughput end to end (POST answered -> received), with the RSS of ingress and dispatcher.
// Run: npm run bench -- deliveries [sessions/s=500] [seconds=60] [cdrs=5000]
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import type { PartyRef } from '@hub/ocpi';
import { setRoutingRule } from '@hub/registry';
import { postgresRegistryStore } from '@hub/store';
import { call, createTestStack, repoRoot, startPartnerSimulator, type PartnerSimulator } from '@hub/testing';
import { benchPlatform, percentile, rssMiB, startNode } from './load.ts';
import { printFigures, type Figure } from './figures.ts';

type Json = Record<string, unknown>;
const rate = Number(process.argv[2] ?? 500);
const seconds = Number(process.argv[3] ?? 60);
const cdrCount = Number(process.argv[4] ?? 5000);
const out = (line: string) => process.stdout.write(`${line}\n`);
const examples = join(repoRoot, '..', 'shared', 'ocpi-2.2.1', 'examples');
const sessionTemplate = JSON.parse(readFileSync(join(examples, 'session_example_1_simple_start.json'), 'utf8')) as Json;
const cdrTemplate = JSON.parse(readFileSync(join(examples, 'cdr_example.json'), 'utf8')) as Json;

const stack = await createTestStack('bench_deliveries');
const env = stack.env({ HUB_PORT: '0', LOG_LEVEL: 'warn', ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', DELIVERY_TIMEOUT_MS: '2000' });
const store = postgresRegistryStore(stack.pool);
const deps = { store, source: 'bench', actor: 'bench' };

const platform = (party: PartyRef, role: 'CPO' | 'EMSP', sim?: PartnerSimulator): Promise<string> => benchPlatform(stack, env['HUB_SECRET_KEY'] ?? '', party, role, sim);

const cpo = { countryCode: 'NL', partyId: 'STK' };
const emsps = [
  { party: { countryCode: 'DE', partyId: 'EMA' }, sim: await startPartnerSimulator() },
  { party: { countryCode: 'DE', partyId: 'EMB' }, sim: await startPartnerSimulator() },
  { party: { countryCode: 'DE', partyId: 'EMC' }, sim: await startPartnerSimulator() },
];
const cpoToken = await platform(cpo, 'CPO');
for (const e of emsps) {
  await platform(e.party, 'EMSP', e.sim);
  await setRoutingRule(deps, { emsp: e.party, cpo, enabled: true });
}
const ingress = await startNode(join(repoRoot, 'services', 'ingress', 'src', 'main.ts'), [], { ...env, LOG_LEVEL: 'info' }, /ingress listening/);
const hub = `http://127.0.0.1:${/"port":(\d+)/.exec(ingress.line)?.[1]}`;
const dispatcher = await startNode(join(repoRoot, 'services', 'dispatcher', 'src', 'main.ts'), [], { ...env, LOG_LEVEL: 'info' }, /dispatcher running/);
const rss = rssMiB;
const figures: Record<string, Figure> = {};
const slug = (label: string) => label.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '');

async function sessionRun(label: string, targets: typeof emsps, hanging?: (typeof emsps)[number], runSeconds = seconds, report = true): Promise<void> {
  if (hanging) hanging.sim.receiverMode = 'hang';
  const sentAt = new Map<string, number>();
  const latencies = new Map<string, number[]>(targets.map((t) => [t.party.partyId, []]));
  for (const t of targets) {
    t.sim.received.length = 0;
  }
  const all = hanging ? [...targets, hanging] : targets;
  const deadline = Date.now() + runSeconds * 1000;
  let n = 0;
  let refused = 0;
  const pending = new Set<Promise<unknown>>();
  while (Date.now() < deadline) {
    const tick = Date.now();
    for (let k = 0; k < rate / 100; k++) {
      const target = all[n % all.length] as (typeof emsps)[number];
      const id = `${label.replace(/\W+/g, '-')}-${n++}`;
      const body = { ...sessionTemplate, country_code: 'NL', party_id: 'STK', id, status: 'ACTIVE', cdr_token: { ...(sessionTemplate['cdr_token'] as Json), country_code: target.party.countryCode, party_id: target.party.partyId }, last_updated: new Date().toISOString() };
      sentAt.set(id, performance.now());
      const p = call(hub, 'PUT', `/ocpi/2.2.1/sessions/NL/STK/${id}`, { token: cpoToken, body }).then((r) => {
        if (r.body.status_code !== 1000) refused++;
      });
      pending.add(p);
      void p.finally(() => pending.delete(p));
    }
    const wait = 10 - (Date.now() - tick);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  await Promise.all(pending);
  const expected = Math.floor((n * targets.length) / all.length);
  const settleBy = Date.now() + 30_000;
  while (targets.reduce((s, t) => s + t.sim.received.length, 0) < expected && Date.now() < settleBy) await new Promise((r) => setTimeout(r, 100));
  for (const t of targets) {
    for (const r of t.sim.received) {
      const sent = sentAt.get(String(r.body['id']));
      if (sent !== undefined) latencies.get(t.party.partyId)?.push(r.at - sent);
    }
  }
  if (!report) return;
  for (const t of targets) {
    const l = latencies.get(t.party.partyId) ?? [];
    figures[`${slug(label)}_${t.party.partyId.toLowerCase()}_p95_ms`] = percentile(l, 95);
    figures[`${slug(label)}_${t.party.partyId.toLowerCase()}_p99_ms`] = percentile(l, 99);
    out(`${label}: eMSP ${t.party.countryCode}/${t.party.partyId} received ${l.length} sessions; PUT -> receipt p50 ${percentile(l, 50).toFixed(0)} ms, p95 ${percentile(l, 95).toFixed(0)} ms, p99 ${percentile(l, 99).toFixed(0)} ms`);
  }
  out(`${label}: ${n} session PUTs at ${rate}/s for ${seconds} s, ${refused} refused; RSS ingress ${rss(ingress.child.pid).toFixed(0)} MiB, dispatcher ${rss(dispatcher.child.pid).toFixed(0)} MiB`);
  if (hanging) hanging.sim.receiverMode = 'ok';
}

try {
  const healthy = emsps.slice(0, 2);
  await sessionRun('warm-up', healthy, undefined, 5, false);
  await sessionRun('all up', healthy);
  await sessionRun('one eMSP hanging', healthy, emsps[2]);

  // CDR throughput: 50 concurrent posters, then wait for every receipt.
  const target = emsps[0] as (typeof emsps)[number];
  target.sim.received.length = 0;
  const started = performance.now();
  let next = 0;
  let maxRss = { ingress: 0, dispatcher: 0 };
  const sampler = setInterval(() => {
    maxRss = { ingress: Math.max(maxRss.ingress, rss(ingress.child.pid)), dispatcher: Math.max(maxRss.dispatcher, rss(dispatcher.child.pid)) };
  }, 200);
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (next < cdrCount) {
        const id = `CDR-${next++}`;
        const body = { ...cdrTemplate, country_code: 'NL', party_id: 'STK', id, cdr_token: { ...(cdrTemplate['cdr_token'] as Json), country_code: target.party.countryCode, party_id: target.party.partyId } };
        const r = await call(hub, 'POST', '/ocpi/2.2.1/cdrs', { token: cpoToken, body });
        if (r.body.status_code !== 1000) throw new Error(r.text);
      }
    }),
  );
  const ingested = performance.now();
  while (target.sim.received.filter((r) => r.kind === 'cdr').length < cdrCount && performance.now() - ingested < 120_000) await new Promise((r) => setTimeout(r, 50));
  const delivered = performance.now();
  clearInterval(sampler);
  Object.assign(figures, {
    cdrs_accepted_per_s: cdrCount / ((ingested - started) / 1000),
    cdrs_end_to_end_per_s: cdrCount / ((delivered - started) / 1000),
    ingress_rss_max_mib: maxRss.ingress,
    dispatcher_rss_max_mib: maxRss.dispatcher,
  });
  out(
    `CDRs: ${cdrCount} posted in ${((ingested - started) / 1000).toFixed(1)} s (${(cdrCount / ((ingested - started) / 1000)).toFixed(0)}/s accepted), ` +
      `all received after ${((delivered - started) / 1000).toFixed(1)} s (${(cdrCount / ((delivered - started) / 1000)).toFixed(0)}/s end to end); ` +
      `max RSS ingress ${maxRss.ingress.toFixed(0)} MiB, dispatcher ${maxRss.dispatcher.toFixed(0)} MiB`,
  );
} finally {
  ingress.child.kill('SIGTERM');
  dispatcher.child.kill('SIGTERM');
  for (const e of emsps) await e.sim.close();
  await new Promise((r) => setTimeout(r, 1000));
  await stack.cleanup();
}
out(`(${new Date().toISOString()}, node ${process.version}, 2 cores)`);
printFigures(figures);
process.exit(0);
