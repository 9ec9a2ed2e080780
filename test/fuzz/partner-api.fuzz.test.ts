// Fuzz tier: a seeded, bounded fuzzer over every endpoint of the partner API
// (README, Partner API), against the real ingress, projector and dispatcher on a real Kafka and
// Postgres. It asserts: no 5xx except 503 with Retry-After; every answer an OCPI envelope; no event
// appended by a refused request (topic end offsets around every request that might append, and
// around each batch of hostile ones); every service process still running with the same pid.
// FUZZ_SEED and FUZZ_REQUESTS change the run; the summary line prints the counts.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { topics } from '@hub/events';
import { authHeader, call, createTestStack, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { freePort, hubctl, onboard, type OnboardedPlatform } from '../helpers.ts';
import { generate, prng, type Endpoint, type FuzzCase } from './cases.ts';

type Json = Record<string, unknown>;
const examples = new URL('../../../shared/ocpi-2.2.1/examples/', import.meta.url);
const example = (name: string) => JSON.parse(readFileSync(new URL(name, examples), 'utf8')) as Json;
const SEED = Number(process.env['FUZZ_SEED'] ?? 20261122);
const REQUESTS = Number(process.env['FUZZ_REQUESTS'] ?? 3000);
const BATCH = 25;

interface Answer {
  readonly status: number;
  readonly retryAfter: boolean;
  readonly envelope: boolean;
  readonly statusCode?: number;
  readonly token?: string;
}

describe('fuzz: the partner API under hostile input', () => {
  let stack: TestStack;
  const services: ServiceProcess[] = [];
  let hub: string;
  let cpo: OnboardedPlatform;
  let emsp: OnboardedPlatform;
  let sacrificial: OnboardedPlatform;
  const tokens: Record<'cpo' | 'emsp' | 'credentials', string> = { cpo: '', emsp: '', credentials: '' };

  before(async () => {
    stack = await createTestStack('fuzz');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    const env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', ACCESS_LOG: 'errors' });
    services.push(await startService('ingress', env, /ingress listening/));
    services.push(await startService('projector', env, /projector running/, 60_000));
    services.push(await startService('dispatcher', env, /dispatcher running/, 60_000));
    cpo = await onboard(hub, env, 'Fuzz CPO', [{ role: 'CPO', countryCode: 'BE', partyId: 'BEC' }]);
    emsp = await onboard(hub, env, 'Fuzz eMSP', [{ role: 'EMSP', countryCode: 'NL', partyId: 'EMS' }], [
      { identifier: 'credentials', role: 'SENDER' },
      { identifier: 'sessions', role: 'RECEIVER' },
      { identifier: 'cdrs', role: 'RECEIVER' },
    ]);
    sacrificial = await onboard(hub, env, 'Fuzz credentials', [{ role: 'EMSP', countryCode: 'DE', partyId: 'CRD' }]);
    assert.equal((await hubctl(env, ['routing', 'enable', '--emsp', 'NL/EMS', '--cpo', 'BE/BEC'])).code, 0);
    Object.assign(tokens, { cpo: cpo.token, emsp: emsp.token, credentials: sacrificial.token });
    // Objects that exist, so detail GETs, PATCHes and child PUTs reach their deeper checks.
    const location = { ...example('location_example.json'), id: 'LOC1' };
    assert.equal((await call(hub, 'PUT', '/ocpi/2.2.1/locations/BE/BEC/LOC1', { token: cpo.token, body: location })).body.status_code, 1000);
    const tariff = { ...example('tariff_1_simple_2hour.json'), country_code: 'BE', party_id: 'BEC', id: 'T1' };
    assert.equal((await call(hub, 'PUT', '/ocpi/2.2.1/tariffs/BE/BEC/T1', { token: cpo.token, body: tariff })).body.status_code, 1000);
  });

  after(async () => {
    await Promise.allSettled([...services.map((s) => s.stop()), cpo?.partner.close(), emsp?.partner.close(), sacrificial?.partner.close()]);
    await stack?.cleanup();
  });

  const endpoints = (): Endpoint[] => {
    const location: Json = { ...example('location_example.json'), id: 'LOC1' };
    const evse = (location['evses'] as Json[])[0] as Json;
    const connector = (evse['connectors'] as Json[])[0] as Json;
    const own = { country_code: 'BE', party_id: 'BEC' };
    const emspToken = { country_code: 'NL', party_id: 'EMS', uid: 'TOK1', type: 'RFID', contract_id: 'NL-EMS-C12345678-X' };
    const session = () => ({ ...example('session_example_1_simple_start.json'), ...own, id: 'S1', cdr_token: emspToken, last_updated: new Date().toISOString() });
    let cdrs = 0;
    const cdr = () => ({ ...example('cdr_example.json'), ...own, id: `CDR-${++cdrs}`, cdr_token: emspToken });
    const v = ['ocpi', '2.2.1'];
    const chargingProfile = { charging_rate_unit: 'A', min_charging_rate: 6.1, charging_profile_period: [{ start_period: 0, limit: 16 }, { start_period: 900, limit: 8.1 }] };
    return [
      { name: 'GET versions', method: 'GET', segments: ['ocpi', 'versions'], caller: 'emsp' },
      { name: 'GET version details', method: 'GET', segments: v, caller: 'cpo' },
      { name: 'GET credentials', method: 'GET', segments: [...v, 'credentials'], caller: 'credentials' },
      { name: 'PUT credentials', method: 'PUT', segments: [...v, 'credentials'], caller: 'credentials', body: () => ({ token: sacrificial.partner.token, url: sacrificial.partner.versionsUrl, roles: [{ role: 'EMSP', country_code: 'DE', party_id: 'CRD', business_details: { name: 'Fuzz credentials' } }] }) },
      { name: 'POST credentials', method: 'POST', segments: [...v, 'credentials'], caller: 'credentials', body: () => example('credentials_example.json') },
      { name: 'GET hubclientinfo', method: 'GET', segments: [...v, 'hubclientinfo'], caller: 'emsp', query: true },
      { name: 'GET locations', method: 'GET', segments: [...v, 'locations'], caller: 'emsp', query: true },
      { name: 'GET location', method: 'GET', segments: [...v, 'locations', 'BE', 'BEC', 'LOC1'], caller: 'cpo' },
      { name: 'GET connector', method: 'GET', segments: [...v, 'locations', 'BE', 'BEC', 'LOC1', String(evse['uid']), String(connector['id'])], caller: 'emsp' },
      { name: 'PUT location', method: 'PUT', segments: [...v, 'locations', 'BE', 'BEC', 'LOC1'], caller: 'cpo', body: () => ({ ...location, last_updated: new Date().toISOString() }) },
      { name: 'PATCH location', method: 'PATCH', segments: [...v, 'locations', 'BE', 'BEC', 'LOC1'], caller: 'cpo', body: () => ({ name: 'patched', last_updated: new Date().toISOString() }) },
      { name: 'PUT EVSE', method: 'PUT', segments: [...v, 'locations', 'BE', 'BEC', 'LOC1', String(evse['uid'])], caller: 'cpo', body: () => evse },
      { name: 'PATCH connector', method: 'PATCH', segments: [...v, 'locations', 'BE', 'BEC', 'LOC1', String(evse['uid']), String(connector['id'])], caller: 'cpo', body: () => ({ max_voltage: 230, last_updated: new Date().toISOString() }) },
      { name: 'GET tariffs', method: 'GET', segments: [...v, 'tariffs'], caller: 'emsp', query: true },
      { name: 'GET tariff', method: 'GET', segments: [...v, 'tariffs', 'BE', 'BEC', 'T1'], caller: 'cpo' },
      { name: 'PUT tariff', method: 'PUT', segments: [...v, 'tariffs', 'BE', 'BEC', 'T1'], caller: 'cpo', body: () => ({ ...example('tariff_1_simple_2hour.json'), ...own, id: 'T1' }) },
      { name: 'DELETE tariff', method: 'DELETE', segments: [...v, 'tariffs', 'BE', 'BEC', 'T9'], caller: 'cpo' },
      { name: 'PUT session', method: 'PUT', segments: [...v, 'sessions', 'BE', 'BEC', 'S1'], caller: 'cpo', body: session },
      { name: 'POST CDR', method: 'POST', segments: [...v, 'cdrs'], caller: 'cpo', body: cdr },
      { name: 'GET CDR', method: 'GET', segments: [...v, 'cdrs', 'BE', 'BEC', '12345'], caller: 'cpo' },
      // Tokens as objects: the eMSP pushes, routed CPOs pull.
      { name: 'PUT token', method: 'PUT', segments: [...v, 'tokens', 'NL', 'EMS', 'TOK1'], caller: 'emsp', body: () => ({ ...example('token_put_example.json'), country_code: 'NL', party_id: 'EMS', uid: 'TOK1', type: 'RFID', last_updated: new Date().toISOString() }) },
      { name: 'PATCH token', method: 'PATCH', segments: [...v, 'tokens', 'NL', 'EMS', 'TOK1'], caller: 'emsp', body: () => ({ valid: false, last_updated: new Date().toISOString() }) },
      { name: 'GET tokens', method: 'GET', segments: [...v, 'tokens'], caller: 'cpo', query: true },
      { name: 'GET token', method: 'GET', segments: [...v, 'tokens', 'NL', 'EMS', 'TOK1'], caller: 'emsp' },
      { name: 'PUT authorize', method: 'PUT', segments: [...v, 'tokens', 'NL', 'EMS', 'TOK1', 'authorize'], caller: 'emsp', body: () => ({ location_id: 'LOC1' }) },
      { name: 'POST authorize (CPO)', method: 'POST', segments: [...v, 'tokens', 'TOK1', 'authorize'], caller: 'cpo', body: () => ({ location_id: 'LOC1' }) },
      { name: 'POST command', method: 'POST', segments: [...v, 'commands', 'START_SESSION'], caller: 'emsp', body: () => ({ response_url: `${emsp.partner.baseUrl}/cb`, token: emspToken, location_id: 'LOC1' }) },
      { name: 'POST command callback', method: 'POST', segments: [...v, 'commands', 'callback', '00000000-0000-4000-8000-000000000000'], caller: 'none', body: () => ({ result: 'ACCEPTED' }) },
      // ChargingProfiles (mod_charging_profiles.asciidoc): this CPO registered no chargingprofiles
      // receiver, so a valid eMSP request is answered NOT_SUPPORTED by the hub and nothing is appended.
      { name: 'PUT charging profile', method: 'PUT', segments: [...v, 'chargingprofiles', 'S1'], caller: 'emsp', body: () => ({ charging_profile: chargingProfile, response_url: `${emsp.partner.baseUrl}/cp` }) },
      { name: 'GET active charging profile', method: 'GET', segments: [...v, 'chargingprofiles', `S1?duration=900&response_url=${encodeURIComponent(`${emsp.partner.baseUrl}/cp`)}`], caller: 'emsp' },
      { name: 'DELETE charging profile', method: 'DELETE', segments: [...v, 'chargingprofiles', `S1?response_url=${encodeURIComponent(`${emsp.partner.baseUrl}/cp`)}`], caller: 'emsp' },
      { name: 'PUT ActiveChargingProfile (CPO)', method: 'PUT', segments: [...v, 'chargingprofiles', 'sender', 'S1'], caller: 'cpo', body: () => ({ start_date_time: new Date().toISOString(), charging_profile: chargingProfile }) },
      { name: 'POST charging profile callback', method: 'POST', segments: [...v, 'chargingprofiles', 'callback', '00000000-0000-4000-8000-000000000000'], caller: 'none', body: () => ({ result: 'ACCEPTED' }) },
    ];
  };

  /**
   * End offsets of every topic a request appends to, summed per topic. The snapshot topics are left
   * out: the projector appends to them after it applied an earlier accepted push
   * (docs/decisions/0014-snapshot-topics.md), whenever that happens to be.
   */
  const offsets = async (): Promise<Map<string, bigint>> => {
    const snapshots: readonly string[] = [topics.locationsSnapshot, topics.tariffsSnapshot, topics.tokensSnapshot];
    const names = Object.values(topics).filter((t) => !snapshots.includes(t));
    const heads = await Promise.all(names.map((t) => stack.eventLog.latestOffsets(t)));
    return new Map(names.map((t, i) => [t, [...(heads[i] ?? new Map<number, bigint>()).values()].reduce((a, b) => a + b, 0n)]));
  };
  const appended = (before: Map<string, bigint>, after: Map<string, bigint>): number =>
    [...after].reduce((n, [t, v]) => n + Number(v - (before.get(t) ?? 0n)), 0);

  async function send(c: FuzzCase): Promise<Answer> {
    const headers: string[] = [];
    const auth = c.authorization === undefined ? (c.caller === 'none' ? null : authHeader(tokens[c.caller])) : c.authorization;
    for (const a of auth === null ? [] : Array.isArray(auth) ? auth : [auth]) headers.push('authorization', a);
    for (const [k, v] of Object.entries(c.headers)) for (const one of Array.isArray(v) ? v : [v]) headers.push(k, one);
    const res = await request(`${hub}${c.path}`, { method: c.method, headers, ...(c.body === undefined ? {} : { body: c.body }) });
    const text = await res.body.text();
    let body: Json | undefined;
    try {
      body = JSON.parse(text) as Json;
    } catch {
      body = undefined;
    }
    const statusCode = typeof body?.['status_code'] === 'number' ? body['status_code'] : undefined;
    const data = body?.['data'] as Json | undefined;
    return {
      status: res.statusCode,
      retryAfter: res.headers['retry-after'] !== undefined,
      envelope: statusCode !== undefined && typeof body?.['timestamp'] === 'string',
      ...(statusCode !== undefined ? { statusCode } : {}),
      ...(typeof data?.['token'] === 'string' ? { token: data['token'] } : {}),
    };
  }

  /** Requests Node's HTTP parser refuses before express: answered on the raw socket. */
  async function sendRaw(head: string): Promise<Answer> {
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(hub).port), '127.0.0.1', () => socket.write(head));
      let got = '';
      socket.on('data', (d: Buffer) => (got += d.toString()));
      socket.on('end', () => resolve(got));
      socket.on('error', reject);
    });
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
    let body: Json | undefined;
    try {
      body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as Json;
    } catch {
      body = undefined;
    }
    const statusCode = typeof body?.['status_code'] === 'number' ? body['status_code'] : undefined;
    return { status, retryAfter: /\r\nretry-after:/i.test(text), envelope: statusCode !== undefined && typeof body?.['timestamp'] === 'string', ...(statusCode !== undefined ? { statusCode } : {}) };
  }

  it('answers every request with an envelope, never 5xx (but 503), appends nothing for refused input, and nothing dies', async () => {
    const pids = services.map((s) => s.child.pid);
    const rng = prng(SEED);
    const cases = generate(rng, endpoints(), REQUESTS);
    const counts = { requests: 0, '2xx': 0, '4xx': 0, '503': 0, '5xx': 0, envelopes: 0, accepted: 0, refusedEvents: 0, hostileAccepted: 0 };
    const problems: string[] = [];
    const acceptedKinds = new Map<string, number>();
    const record = (c: { kind: string; detail?: string; endpoint: string; method: string; path: string }, a: Answer) => {
      counts.requests++;
      if (a.status >= 200 && a.status < 300) counts['2xx']++;
      else if (a.status >= 400 && a.status < 500) counts['4xx']++;
      else if (a.status === 503) counts['503']++;
      if (a.status >= 500 && a.status !== 503) counts['5xx']++;
      if (a.envelope) counts.envelopes++;
      const where = `${c.kind}${'detail' in c && c.detail ? ` ${c.detail}` : ''} / ${c.endpoint}: ${c.method} ${c.path.slice(0, 80)}`;
      if (a.status >= 500 && !(a.status === 503 && a.retryAfter)) problems.push(`HTTP ${a.status} for ${where}`);
      if (!a.envelope) problems.push(`no envelope (HTTP ${a.status}) for ${where}`);
    };
    const isAcceptedWrite = (c: FuzzCase, a: Answer) => c.method !== 'GET' && a.statusCode !== undefined && a.statusCode >= 1000 && a.statusCode < 2000;

    // Registry events of the set-up have reached Kafka before the first snapshot.
    let snapshot = await offsets();
    for (let settled = 0; settled < 3; ) {
      await new Promise((r) => setTimeout(r, 300));
      const now = await offsets();
      settled = appended(snapshot, now) === 0 ? settled + 1 : 0;
      snapshot = now;
    }

    let batch: Array<{ c: FuzzCase; a: Answer }> = [];
    const closeBatch = async () => {
      if (batch.length === 0) return;
      const now = await offsets();
      const delta = appended(snapshot, now);
      const accepted = batch.filter(({ c, a }) => isAcceptedWrite(c, a));
      counts.hostileAccepted += accepted.length;
      for (const { c } of accepted) problems.push(`hostile input accepted: ${c.kind} / ${c.endpoint}`);
      if (accepted.length === 0) counts.refusedEvents += delta;
      snapshot = now;
      batch = [];
    };
    for (const c of cases) {
      if (c.hostile) {
        const a = await send(c);
        record(c, a);
        batch.push({ c, a });
        if (batch.length >= BATCH) await closeBatch();
        continue;
      }
      await closeBatch();
      const a = await send(c);
      record(c, a);
      if (c.caller === 'credentials' && a.token && a.statusCode === 1000) tokens.credentials = a.token;
      // A credentials change reaches Kafka through the outbox after the answer: wait for it.
      if (c.caller === 'credentials' && a.statusCode === 1000 && c.method !== 'GET') await new Promise((r) => setTimeout(r, 1000));
      const now = await offsets();
      const delta = appended(snapshot, now);
      if (isAcceptedWrite(c, a)) {
        counts.accepted++;
        const label = c.detail ? `${c.kind} ${c.detail} @ ${c.endpoint}` : c.kind;
        acceptedKinds.set(label, (acceptedKinds.get(label) ?? 0) + 1);
      } else {
        counts.refusedEvents += delta;
        if (delta > 0) problems.push(`${delta} event(s) appended for a refused request (${a.statusCode ?? a.status}): ${c.kind} / ${c.endpoint}`);
      }
      snapshot = now;
    }
    await closeBatch();

    // What Node's HTTP parser refuses: an unknown method, a malformed request line, a broken header.
    for (const head of ['FOO /ocpi/versions HTTP/1.1\r\nHost: x\r\n\r\n', 'GET /ocpi/versions HTTP/9.9\r\nHost: x\r\n\r\n', 'GET /ocpi/versions HTTP/1.1\r\nNo colon here\r\n\r\n', `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`]) {
      record({ kind: 'refused by the HTTP parser', endpoint: 'raw socket', method: head.split(' ')[0] ?? '', path: '' }, await sendRaw(head));
    }

    const alive = services.map((s, i) => ({ name: s.name, same: s.child.exitCode === null && s.child.signalCode === null && s.child.pid === pids[i] }));
    // The one line the issue notes quote.
    process.stdout.write(
      `fuzz summary: seed=${SEED} requests=${counts.requests} 2xx=${counts['2xx']} 4xx=${counts['4xx']} 503=${counts['503']} 5xx=${counts['5xx']} envelopes=${counts.envelopes} ` +
        `accepted_writes=${counts.accepted} events_from_refused_input=${counts.refusedEvents} hostile_accepted=${counts.hostileAccepted} ` +
        `accepted_by_kind=${JSON.stringify(Object.fromEntries(acceptedKinds))} services_same_pid=${alive.every((s) => s.same)}\n`,
    );
    assert.deepEqual(problems.slice(0, 30), [], `${problems.length} problem(s)`);
    assert.equal(counts.refusedEvents, 0, 'events appended by refused input');
    assert.equal(counts.envelopes, counts.requests, 'every answer an envelope');
    assert.deepEqual(alive.filter((s) => !s.same), [], 'every service still running with the same pid');
  });
});
