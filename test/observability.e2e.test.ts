// Dashboards and alerts for real: promtool accepts infra/observability/alerts.yml,
// and a real Prometheus scraping the four real services under a little traffic returns series for
// every alert expression (without its threshold) and every dashboard panel query, and for every
// metric name they use: a renamed metric or label breaks this test even while nothing fires.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { newEvent, topics } from '@hub/events';
import { call, createTestStack, repoRoot, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { prometheusBinaries, startPrometheus, type RunningPrometheus } from '../infra/stack/prometheus.ts';
import { freePort, hubctl, onboard, until, type OnboardedPlatform, ocpiExample } from './helpers.ts';

type Json = Record<string, unknown>;
const alertsFile = join(repoRoot, 'infra', 'observability', 'alerts.yml');
const dashboardFile = join(repoRoot, 'infra', 'observability', 'dashboard.json');
const example = ocpiExample;
const receiverModules = [
  { identifier: 'credentials', role: 'SENDER' as const },
  { identifier: 'sessions', role: 'RECEIVER' as const },
  { identifier: 'cdrs', role: 'RECEIVER' as const },
];

/** Alert expressions from the rules file (a YAML subset: `expr:` lines, one expression a line). */
function alertRules(): Array<{ alert: string; expr: string }> {
  const rules: Array<{ alert: string; expr: string }> = [];
  let alert = '';
  for (const line of readFileSync(alertsFile, 'utf8').split('\n')) {
    const a = /^\s*- alert: (\S+)/.exec(line);
    if (a) alert = a[1] ?? '';
    const e = /^\s*expr: (.+)$/.exec(line);
    if (e) rules.push({ alert, expr: e[1] ?? '' });
  }
  return rules;
}

/** The expression without its threshold comparisons (`> 0`, `== 0`, ...): the series it watches. */
function withoutThresholds(expr: string): string {
  return expr.replace(/\s*(?:>=|<=|==|!=|>|<)\s*-?\d+(?:\.\d+)?\b/g, '');
}

function dashboardQueries(): Array<{ panel: string; expr: string }> {
  const dashboard = JSON.parse(readFileSync(dashboardFile, 'utf8')) as { panels: Array<{ title: string; targets?: Array<{ expr: string }> }> };
  return dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr.replaceAll('$__rate_interval', '1m').replaceAll('$__interval', '5s') })));
}

const metricNames = (expr: string) => [...new Set(expr.match(/\bhub_[a-z_]+\b/g) ?? [])];

describe('observability: alert rules and dashboard against a real Prometheus', () => {
  let stack: TestStack;
  const services: ServiceProcess[] = [];
  const partners: OnboardedPlatform[] = [];
  let prometheus: RunningPrometheus | undefined;
  let env: Record<string, string>;

  const query = async (expr: string): Promise<Json[]> => {
    const res = await fetch(`${prometheus?.url ?? ''}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await res.json()) as { status: string; error?: string; data?: { result: Json[] } };
    assert.equal(body.status, 'success', `${expr}: ${body.error ?? ''}`);
    return body.data?.result ?? [];
  };

  before(async () => {
    stack = await createTestStack('observability');
    const port = await freePort();
    const hub = `http://127.0.0.1:${port}`;
    env = stack.env({
      HUB_PORT: String(port),
      ALLOW_HTTP_PARTNER_URLS: 'true',
      PARTNER_ALLOWED_HOSTS: '127.0.0.1',
      // Two failed attempts, then a retry a minute later: the record stays pending meanwhile.
      DELIVERY_RETRY_SCHEDULE_MS: '100,60000',
      DELIVERY_TIMEOUT_MS: '1000',
      PROBE_INTERVAL_MS: '1000',
    });
    for (const [name, ready] of [['ingress', /ingress listening/], ['projector', /projector running/], ['dispatcher', /dispatcher running/], ['prober', /prober running/]] as const) {
      services.push(await startService(name, env, ready, 60_000));
    }
    const operatorPort = (s: ServiceProcess) => (JSON.parse(s.logs.find((l) => l.includes('"operatorPort"')) ?? '{}') as { operatorPort?: number }).operatorPort;
    const targets = Object.fromEntries(services.map((s) => [s.name, [`127.0.0.1:${String(operatorPort(s))}`]]));
    prometheus = await startPrometheus(targets, [alertsFile]);

    // A little traffic: a CPO, an eMSP that accepts, one that fails, one without receivers.
    const cpo = await onboard(hub, env, 'CPO', [{ role: 'CPO', countryCode: 'NL', partyId: 'STK' }]);
    const ok = await onboard(hub, env, 'eMSP OK', [{ role: 'EMSP', countryCode: 'NL', partyId: 'TST' }], receiverModules);
    const failing = await onboard(hub, env, 'eMSP failing', [{ role: 'EMSP', countryCode: 'DE', partyId: 'TNM' }], receiverModules);
    const unroutable = await onboard(hub, env, 'eMSP without receivers', [{ role: 'EMSP', countryCode: 'FR', partyId: 'NOR' }]);
    partners.push(cpo, ok, failing, unroutable);
    failing.partner.receiverMode = 'fail';
    for (const emsp of ['NL/TST', 'DE/TNM', 'FR/NOR']) assert.equal((await hubctl(env, ['routing', 'enable', '--emsp', emsp, '--cpo', 'NL/STK'])).code, 0);

    const location = { ...example('location_example.json'), country_code: 'NL', party_id: 'STK', id: 'LOC-OBS', last_updated: new Date().toISOString() };
    assert.equal((await call(hub, 'PUT', '/ocpi/2.2.1/locations/NL/STK/LOC-OBS', { token: cpo.token, body: location })).body.status_code, 1000);
    const session = (id: string, cc: string, pid: string) => {
      const s = example('session_example_1_simple_start.json');
      return { ...s, country_code: 'NL', party_id: 'STK', id, cdr_token: { ...(s['cdr_token'] as Json), country_code: cc, party_id: pid }, last_updated: new Date().toISOString() };
    };
    for (const [id, cc, pid] of [['S-OK', 'NL', 'TST'], ['S-FAIL-1', 'DE', 'TNM'], ['S-FAIL-2', 'DE', 'TNM'], ['S-NOROUTE', 'FR', 'NOR']] as const) {
      const res = await call(hub, 'PUT', `/ocpi/2.2.1/sessions/NL/STK/${id}`, { token: cpo.token, body: session(id, cc, pid) });
      assert.equal(res.body.status_code, 1000, res.text);
    }
    const cdr: Json = { ...example('cdr_example.json'), country_code: 'NL', party_id: 'STK', id: 'CDR-OBS' };
    assert.equal((await call(hub, 'POST', '/ocpi/2.2.1/cdrs', { token: cpo.token, body: { ...cdr, cdr_token: { ...(cdr['cdr_token'] as Json), country_code: 'NL', party_id: 'TST' } } })).body.status_code, 1000);
    // A record the projector cannot apply (its data is no object): quarantined.
    await stack.eventLog.append(topics.locations, [newEvent({ type: 'ocpi.locations.location-put.v1', source: 'test', subject: 'NL/STK/POISON', key: 'NL/STK/POISON', data: null })]);
    // S-FAIL-2 is made due again at once: its third attempt is its last, a dead letter.
    // attempts counts a claim as it starts: wait until the second failure is recorded (its minute-long
    // retry scheduled), or that bookkeeping would overwrite the next_attempt_at set below.
    await until('both failing sessions wait for their second retry', async () =>
      (await stack.pool.query(`select 1 from deliveries where object_id like 'S-FAIL-%' and state = 'pending' and attempts = 2 and next_attempt_at > now() + interval '30 seconds'`)).rowCount === 2);
    await stack.pool.query(`update deliveries set next_attempt_at = now() where object_id = 'S-FAIL-2'`);
    await until('S-FAIL-2 is a dead letter', async () => (await stack.pool.query(`select 1 from deliveries where object_id = 'S-FAIL-2' and state = 'dead'`)).rowCount === 1);
    await until('S-OK delivered', () => ok.partner.received.some((r) => r.body['id'] === 'S-OK'));
  });

  after(async () => {
    await prometheus?.stop();
    await Promise.allSettled([...services.map((s) => s.stop()), ...partners.map((p) => p.partner.close())]);
    await stack?.cleanup();
  });

  it('hubctl status --json shows the same hub: parties, deliveries per eMSP, quarantine', async () => {
    const out = await hubctl(env, ['status', '--json']);
    assert.equal(out.code, 0, out.stderr);
    const status = JSON.parse(out.stdout) as { totals: Json; deliveries: Json[]; quarantined: Json[]; consumer_lag: Array<{ group: string; lag: number | null }> };
    assert.equal(status.totals['parties'], 4);
    assert.equal(status.totals['routing_rules'], 3);
    assert.deepEqual(status.deliveries, [
      { emsp: 'DE/TNM', pending: 1, dead: 1, unroutable: 0 },
      { emsp: 'FR/NOR', pending: 0, dead: 0, unroutable: 1 },
    ]);
    assert.deepEqual(status.quarantined, [{ group: 'projector', topic: topics.locations, records: 1 }]);
    assert.ok(status.consumer_lag.some((l) => l.group === 'dispatcher' && l.lag !== null), JSON.stringify(status.consumer_lag));
  });

  it('promtool accepts the alert rules and the sample prometheus.yml', async () => {
    const { promtool } = await prometheusBinaries();
    const { stdout } = await promisify(execFile)(promtool, ['check', 'rules', alertsFile]);
    assert.match(stdout, /SUCCESS: \d+ rules found/);
    // The sample configuration the README gives (it loads the same rules file).
    const config = await promisify(execFile)(promtool, ['check', 'config', join(repoRoot, 'infra', 'observability', 'prometheus.yml')]);
    assert.match(config.stdout, /SUCCESS: 1 rule files found/);
  });

  it('every alert rule is loaded and evaluates without error, and ends in one threshold the test can take off', async () => {
    const rules = alertRules();
    assert.ok(rules.length >= 10, `${rules.length} rules`);
    for (const r of rules) assert.notEqual(withoutThresholds(r.expr), r.expr, `${r.alert} has no threshold comparison`);
    const loaded = await until('Prometheus evaluated every rule', async () => {
      const res = (await (await fetch(`${prometheus?.url ?? ''}/api/v1/rules`)).json()) as { data: { groups: Array<{ rules: Array<{ name: string; health: string; lastError?: string }> }> } };
      const all = res.data.groups.flatMap((g) => g.rules);
      return all.length === rules.length && all.every((r) => r.health !== 'unknown') ? all : undefined;
    });
    for (const r of loaded) assert.equal(r.health, 'ok', `${r.name}: ${r.lastError ?? ''}`);
  });

  it('every metric, alert expression and dashboard query returns series from the running hub', async () => {
    const alerts = alertRules().map((r) => ({ what: `alert ${r.alert}`, expr: withoutThresholds(r.expr) }));
    const panels = dashboardQueries().map((q) => ({ what: `panel "${q.panel}"`, expr: q.expr }));
    assert.ok(panels.length >= 15, `${panels.length} dashboard queries`);
    const names = [...new Set([...alertRules(), ...dashboardQueries()].flatMap((q) => metricNames(q.expr)))].map((n) => ({ what: `metric ${n}`, expr: `count({__name__="${n}"})` }));
    const all = [...names, ...alerts, ...panels];
    let missing: string[] = [];
    const started = Date.now();
    // Gauges fill in on their own schedules (backlog every 5 s, outbox relay every 5 s, probes every 1 s).
    await until(
      'series for every query',
      async () => {
        missing = [];
        for (const q of all) if ((await query(q.expr)).length === 0) missing.push(`${q.what}: ${q.expr}`);
        return missing.length === 0;
      },
      45_000,
    ).catch(() => undefined);
    process.stdout.write(`# ${all.length} queries (${names.length} metrics, ${alerts.length} alerts, ${panels.length} panel targets) checked in ${Date.now() - started} ms\n`);
    assert.deepEqual(missing, []);
  });
});
