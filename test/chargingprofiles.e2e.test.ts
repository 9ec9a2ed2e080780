// ChargingProfiles through the hub (mod_charging_profiles.asciidoc): eMSP -> hub -> CPO for set, get
// and clear, the CPO's result -> hub callback -> eMSP response_url, the hub's own answer when the CPO
// never calls back, and the CPO's ActiveChargingProfile updates to the session's eMSP only. Real
// ingress, projector and dispatcher processes, real Kafka and Postgres, partners as real HTTP servers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { call, createTestStack, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { freePort, hubctl, onboard, readTopic, until, type OnboardedPlatform, ocpiExample } from './helpers.ts';

type Json = Record<string, unknown>;

const profile = { charging_rate_unit: 'A', min_charging_rate: 6.1, charging_profile_period: [{ start_period: 0, limit: 16 }, { start_period: 900, limit: 8.1 }] };

describe('charging profiles relayed between eMSPs and CPOs', () => {
  let stack: TestStack;
  let services: ServiceProcess[] = [];
  let hub: string;
  let env: Record<string, string>;
  let cpo: OnboardedPlatform; // BE/BEC, with a chargingprofiles receiver
  let plainCpo: OnboardedPlatform; // BE/NOC, without one
  let emsp: OnboardedPlatform; // NL/TST
  let otherEmsp: OnboardedPlatform; // NL/OTH, routed to the same CPO
  const responseUrl = (id: string) => `${emsp.partner.baseUrl}/ocpi/2.2.1/chargingprofile-results/${id}`;
  const resultsFor = (id: string) => emsp.partner.received.filter((r) => r.kind === 'charging_profile_result' && r.path.endsWith(`/${id}`));
  const put = (sessionId: string, body: Json, as: OnboardedPlatform = emsp, headers: Record<string, string> = {}) => call<Json>(hub, 'PUT', `/ocpi/2.2.1/chargingprofiles/${sessionId}`, { token: as.token, body, headers });
  const get = (sessionId: string, query: string, as: OnboardedPlatform = emsp) => call<Json>(hub, 'GET', `/ocpi/2.2.1/chargingprofiles/${sessionId}?${query}`, { token: as.token });
  const del = (sessionId: string, query: string) => call<Json>(hub, 'DELETE', `/ocpi/2.2.1/chargingprofiles/${sessionId}?${query}`, { token: emsp.token });
  const pushSession = async (from: OnboardedPlatform, cc: string, pid: string, id: string, to: { countryCode: string; partyId: string }) => {
    const base = ocpiExample('session_example_1_simple_start.json');
    const session = { ...base, country_code: cc, party_id: pid, id, cdr_token: { ...(base['cdr_token'] as Json), country_code: to.countryCode, party_id: to.partyId } };
    assert.equal((await call(hub, 'PUT', `/ocpi/2.2.1/sessions/${cc}/${pid}/${id}`, { token: from.token, body: session })).body.status_code, 1000);
  };

  before(async () => {
    stack = await createTestStack('chargingprofiles');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', COMMAND_GRACE_SECONDS: '1', DELIVERY_RETRY_SCHEDULE_MS: '100,200,400' });
    services = [
      await startService('ingress', env, /ingress listening/),
      await startService('projector', env, /projector running/, 60_000),
      await startService('dispatcher', env, /dispatcher running/, 60_000),
    ];
    cpo = await onboard(hub, env, 'CPO', [{ role: 'CPO', countryCode: 'BE', partyId: 'BEC' }], [
      { identifier: 'credentials', role: 'SENDER' },
      { identifier: 'chargingprofiles', role: 'RECEIVER' },
    ]);
    plainCpo = await onboard(hub, env, 'Plain CPO', [{ role: 'CPO', countryCode: 'BE', partyId: 'NOC' }], [{ identifier: 'credentials', role: 'SENDER' }]);
    const emspModules = [
      { identifier: 'credentials', role: 'SENDER' as const },
      { identifier: 'sessions', role: 'RECEIVER' as const },
      { identifier: 'chargingprofiles', role: 'SENDER' as const },
    ];
    emsp = await onboard(hub, env, 'eMSP', [{ role: 'EMSP', countryCode: 'NL', partyId: 'TST' }], emspModules);
    otherEmsp = await onboard(hub, env, 'Other eMSP', [{ role: 'EMSP', countryCode: 'NL', partyId: 'OTH' }], emspModules);
    for (const [e, c] of [['NL/TST', 'BE/BEC'], ['NL/TST', 'BE/NOC'], ['NL/OTH', 'BE/BEC']]) assert.equal((await hubctl(env, ['routing', 'enable', '--emsp', e ?? '', '--cpo', c ?? ''])).code, 0);
    await pushSession(cpo, 'BE', 'BEC', 'SESSION-1', { countryCode: 'NL', partyId: 'TST' });
    await pushSession(cpo, 'BE', 'BEC', 'SESSION-2', { countryCode: 'NL', partyId: 'OTH' });
    await pushSession(plainCpo, 'BE', 'NOC', 'SESSION-3', { countryCode: 'NL', partyId: 'TST' });
    await until('sessions delivered', () => emsp.partner.received.filter((r) => r.kind === 'session').length >= 2 && otherEmsp.partner.received.some((r) => r.kind === 'session'));
  });

  after(async () => {
    await Promise.allSettled([...services.map((s) => s.stop()), cpo?.partner.close(), plainCpo?.partner.close(), emsp?.partner.close(), otherEmsp?.partner.close()]);
    await stack?.cleanup();
  });

  it('lists chargingprofiles as SENDER and RECEIVER in the version details', async () => {
    const res = await call<{ endpoints: Array<{ identifier: string; role: string; url: string }> }>(hub, 'GET', '/ocpi/2.2.1', { token: emsp.token });
    const endpoints = res.body.data?.endpoints.filter((e) => e.identifier === 'chargingprofiles') ?? [];
    assert.deepEqual(endpoints.map((e) => [e.role, e.url]).sort(), [
      ['RECEIVER', `${hub}/ocpi/2.2.1/chargingprofiles`],
      ['SENDER', `${hub}/ocpi/2.2.1/chargingprofiles/sender`],
    ]);
  });

  it('set: the CPO gets the profile with the hub callback, the eMSP the CPO answer unchanged and the ChargingProfileResult', async () => {
    const res = await put('SESSION-1', { charging_profile: profile, response_url: responseUrl('set-1') }, emsp, { 'X-Correlation-ID': 'corr-set' });
    assert.equal(res.body.status_code, 1000, res.text);
    assert.deepEqual(res.body.data, { result: 'ACCEPTED', timeout: 30 });
    const forwarded = cpo.partner.profileRequests.at(-1);
    assert.equal(forwarded?.method, 'PUT');
    assert.equal(forwarded?.sessionId, 'SESSION-1');
    assert.deepEqual(forwarded?.body?.['charging_profile'], profile);
    assert.equal(forwarded?.headers['ocpi-from-party-id'], 'TST');
    assert.equal(forwarded?.headers['ocpi-to-party-id'], 'BEC');
    const callback = String(forwarded?.body?.['response_url']);
    assert.match(callback, new RegExp(`^${hub}/ocpi/2\\.2\\.1/chargingprofiles/callback/[0-9a-f-]{36}$`), 'response_url rewritten to the hub');
    const result = await until('ChargingProfileResult at the eMSP', () => resultsFor('set-1')[0]);
    assert.deepEqual(result.body, { result: 'ACCEPTED' });
    assert.equal(result.headers['x-correlation-id'], 'corr-set');
    // Every step is an event on the chargingprofiles topic, keyed by the request id.
    const id = callback.split('/').at(-1) ?? '';
    const events = await readTopic(stack, 'ocpi.chargingprofiles.v1', (rs) => rs.filter((r) => r.key === id).length >= 3, 10_000);
    assert.deepEqual(
      events.filter((e) => e.key === id).map((e) => e.headers['ce_type']),
      ['ocpi.chargingprofiles.requested.v1', 'ocpi.chargingprofiles.cpo-responded.v1', 'ocpi.chargingprofiles.result-received.v1'],
    );
    // Used once: a second result for the same id is refused and not forwarded.
    const again = await request(callback, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ result: 'REJECTED' }) });
    assert.equal(again.statusCode, 404);
    await again.body.text();
  });

  it('get: duration and the hub callback reach the CPO; the ActiveChargingProfileResult with its profile reaches the eMSP', async () => {
    const res = await get('session-1', `duration=900&response_url=${encodeURIComponent(responseUrl('get-1'))}`);
    assert.deepEqual(res.body.data, { result: 'ACCEPTED', timeout: 30 }, res.text);
    const forwarded = cpo.partner.profileRequests.at(-1);
    assert.equal(forwarded?.method, 'GET');
    assert.equal(forwarded?.query['duration'], '900');
    assert.match(String(forwarded?.query['response_url']), /\/ocpi\/2\.2\.1\/chargingprofiles\/callback\/[0-9a-f-]{36}$/);
    const result = await until('ActiveChargingProfileResult at the eMSP', () => resultsFor('get-1')[0]);
    assert.equal(result.body['result'], 'ACCEPTED');
    assert.equal((result.body['profile'] as Json)['charging_profile'] !== undefined, true);
  });

  it('clear: a ClearProfileResult REJECTED reaches the eMSP; every immediate answer of the CPO is passed on unchanged', async () => {
    cpo.partner.profileResult = 'REJECTED';
    const res = await del('SESSION-1', `response_url=${encodeURIComponent(responseUrl('clear-1'))}`);
    assert.deepEqual(res.body.data, { result: 'ACCEPTED', timeout: 30 }, res.text);
    assert.equal(cpo.partner.profileRequests.at(-1)?.method, 'DELETE');
    assert.deepEqual((await until('ClearProfileResult at the eMSP', () => resultsFor('clear-1')[0])).body, { result: 'REJECTED' });
    cpo.partner.profileResult = 'UNKNOWN';
    assert.equal((await put('SESSION-1', { charging_profile: profile, response_url: responseUrl('set-unknown') })).body.data?.['result'], 'ACCEPTED');
    assert.deepEqual((await until('UNKNOWN at the eMSP', () => resultsFor('set-unknown')[0])).body, { result: 'UNKNOWN' });
    cpo.partner.profileResult = 'ACCEPTED';
    for (const answer of ['REJECTED', 'TOO_OFTEN', 'UNKNOWN_SESSION', 'NOT_SUPPORTED'] as const) {
      cpo.partner.profileAnswer = answer;
      const r = await put('SESSION-1', { charging_profile: profile, response_url: responseUrl(`answer-${answer}`) });
      assert.deepEqual(r.body.data, { result: answer, timeout: 30 }, answer);
    }
    cpo.partner.profileAnswer = 'ACCEPTED';
  });

  it('a CPO that never calls back: the hub sends REJECTED itself; a late result is recorded, not forwarded', async () => {
    cpo.partner.profileResult = 'none';
    cpo.partner.profileTimeoutSeconds = 1;
    try {
      const res = await put('SESSION-1', { charging_profile: profile, response_url: responseUrl('timeout-1') });
      assert.deepEqual(res.body.data, { result: 'ACCEPTED', timeout: 1 });
      const callback = String(cpo.partner.profileRequests.at(-1)?.body?.['response_url']);
      assert.deepEqual((await until('the hub answer at the eMSP', () => resultsFor('timeout-1')[0], 15_000)).body, { result: 'REJECTED' });
      const late = await request(callback, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ result: 'ACCEPTED' }) });
      assert.equal(late.statusCode, 200);
      await late.body.text();
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(resultsFor('timeout-1').length, 1, 'the late result is not forwarded');
      const id = callback.split('/').at(-1) ?? '';
      const { rows } = await stack.pool.query<{ state: string; late_result: Json }>('select state, late_result from charging_profile_requests where id = $1', [id]);
      assert.deepEqual([rows[0]?.state, rows[0]?.late_result], ['timed_out', { result: 'ACCEPTED' }]);
      const events = await readTopic(stack, 'ocpi.chargingprofiles.v1', (rs) => rs.some((r) => r.key === id && r.headers['ce_type'] === 'ocpi.chargingprofiles.timed-out.v1'), 10_000);
      assert.ok(events.some((r) => r.key === id && r.headers['ce_type'] === 'ocpi.chargingprofiles.timed-out.v1'));
    } finally {
      cpo.partner.profileResult = 'ACCEPTED';
      cpo.partner.profileTimeoutSeconds = 30;
    }
  });

  it("a CPO's ActiveChargingProfile updates reach only the session's eMSP, and an older one never overwrites a newer", async () => {
    const active = (at: string, limit: number) => ({ start_date_time: at, charging_profile: { charging_rate_unit: 'W', charging_profile_period: [{ start_period: 0, limit }] } });
    const push = (sessionId: string, body: Json) => call<Json>(hub, 'PUT', `/ocpi/2.2.1/chargingprofiles/sender/${sessionId}`, { token: cpo.token, body });
    const receivedBy = (p: OnboardedPlatform) => p.partner.received.filter((r) => r.kind === 'active_charging_profile');
    emsp.partner.receiverMode = 'fail'; // held back, so the newer and the older meet in the queue
    try {
      assert.equal((await push('SESSION-1', active('2026-11-26T10:05:00Z', 7400))).body.status_code, 1000);
      assert.equal((await push('SESSION-1', active('2026-11-26T10:00:00Z', 3700))).body.status_code, 1000);
    } finally {
      emsp.partner.receiverMode = 'ok';
    }
    await hubctl(env, ['deliveries', 'redrive', '--emsp', 'NL/TST']);
    const first = await until('the update at the eMSP', () => receivedBy(emsp)[0], 15_000);
    assert.equal(first.path, '/ocpi/2.2.1/chargingprofiles/SESSION-1');
    assert.equal(first.headers['ocpi-from-party-id'], 'BEC');
    assert.equal(first.body['start_date_time'], '2026-11-26T10:05:00Z');
    assert.equal((await push('SESSION-1', active('2026-11-26T10:10:00Z', 11000))).body.status_code, 1000);
    await until('the newer update', () => receivedBy(emsp).some((r) => r.body['start_date_time'] === '2026-11-26T10:10:00Z'), 15_000);
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(receivedBy(emsp).map((r) => r.body['start_date_time']), ['2026-11-26T10:05:00Z', '2026-11-26T10:10:00Z'], 'the older profile is never delivered');
    assert.equal(receivedBy(otherEmsp).length, 0, 'only the eMSP of the session');
    const unknown = await push('NOPE', active('2026-11-26T10:00:00Z', 1));
    assert.deepEqual([unknown.status, unknown.body.status_code], [404, 2000]);
    assert.match(unknown.body.status_message ?? '', /NOPE/);
  });

  it('a session of another eMSP, an unknown session and an unrouted eMSP are refused; nothing is forwarded', async () => {
    const before = cpo.partner.profileRequests.length;
    const foreign = await put('SESSION-2', { charging_profile: profile, response_url: responseUrl('foreign') });
    assert.deepEqual([foreign.status, foreign.body.status_code], [404, 2000]);
    assert.match(foreign.body.status_message ?? '', /SESSION-2/);
    const unknown = await get('NOPE', `duration=60&response_url=${encodeURIComponent(responseUrl('nope'))}`);
    assert.deepEqual([unknown.status, unknown.body.status_code], [404, 2000]);
    assert.match(unknown.body.status_message ?? '', /unknown session NOPE/);
    const otherCpo = await put('SESSION-1', { charging_profile: profile, response_url: responseUrl('to') }, emsp, { 'OCPI-to-country-code': 'BE', 'OCPI-to-party-id': 'NOC' });
    assert.equal(otherCpo.body.status_code, 2001, 'OCPI-to must name the session CPO');
    assert.equal((await hubctl(env, ['routing', 'disable', '--emsp', 'NL/TST', '--cpo', 'BE/BEC'])).code, 0);
    try {
      const unrouted = await put('SESSION-1', { charging_profile: profile, response_url: responseUrl('unrouted') });
      assert.equal(unrouted.body.status_code, 1000);
      assert.deepEqual(unrouted.body.data, { result: 'REJECTED', timeout: 0 });
      assert.match(unrouted.body.status_message ?? '', /no active routing rule/);
    } finally {
      assert.equal((await hubctl(env, ['routing', 'enable', '--emsp', 'NL/TST', '--cpo', 'BE/BEC'])).code, 0);
    }
    assert.equal(cpo.partner.profileRequests.length, before, 'nothing forwarded');
  });

  it('a CPO without a chargingprofiles receiver: NOT_SUPPORTED from the hub; forwarded once an operator sets one', async () => {
    const res = await put('SESSION-3', { charging_profile: profile, response_url: responseUrl('nosupport') });
    assert.deepEqual(res.body.data, { result: 'NOT_SUPPORTED', timeout: 0 }, res.text);
    assert.match(res.body.status_message ?? '', /BE\/NOC has no chargingprofiles receiver/);
    assert.equal(plainCpo.partner.profileRequests.length, 0);
    assert.equal((await hubctl(env, ['endpoint', 'set', '--country', 'BE', '--party', 'NOC', '--role', 'CPO', '--module', 'chargingprofiles', '--url', `${plainCpo.partner.baseUrl}/ocpi/2.2.1/chargingprofiles`])).code, 0);
    await until('the override in force', async () => (await put('SESSION-3', { charging_profile: profile, response_url: responseUrl('override') })).body.data?.['result'] === 'ACCEPTED', 40_000);
    assert.equal(plainCpo.partner.profileRequests.at(-1)?.sessionId, 'SESSION-3');
  });

  it('bad input: the ChargingProfile schema, GET parameters and unsafe response_urls give 2001', async () => {
    const before = cpo.partner.profileRequests.length;
    const cases: Array<[Json, RegExp]> = [
      [{ charging_profile: { ...profile, charging_profile_period: [{ start_period: 0, limit: 8.15 }] }, response_url: responseUrl('b1') }, /\/charging_profile\/charging_profile_period\/0\/limit: accepts at most one digit fraction/],
      [{ charging_profile: { ...profile, charging_rate_unit: 'kW' }, response_url: responseUrl('b2') }, /charging_rate_unit/],
      [{ charging_profile: { ...profile, min_charging_rate: -1 }, response_url: responseUrl('b3') }, /min_charging_rate/],
      [{ charging_profile: { charging_profile_period: [{ start_period: 0 }] }, response_url: responseUrl('b4') }, /charging_rate_unit|limit/],
      [{ charging_profile: profile }, /response_url/],
    ];
    for (const [body, message] of cases) {
      const res = await put('SESSION-1', body);
      assert.equal(res.body.status_code, 2001, JSON.stringify(body));
      assert.match(res.body.status_message ?? '', message);
    }
    assert.equal((await get('SESSION-1', `response_url=${encodeURIComponent(responseUrl('b5'))}`)).body.status_code, 2001, 'duration required');
    assert.equal((await get('SESSION-1', 'duration=60')).body.status_code, 2001, 'response_url required');
    assert.equal((await del('SESSION-1', '')).body.status_code, 2001, 'response_url required');
    for (const url of ['https://attacker.example.com/results', 'http://127.0.0.1:9/results', 'http://169.254.169.254/latest/meta-data']) {
      const res = await put('SESSION-1', { charging_profile: profile, response_url: url });
      assert.equal(res.body.status_code, 2001, url);
      assert.match(res.body.status_message ?? '', /response_url/);
      assert.equal((await del('SESSION-1', `response_url=${encodeURIComponent(url)}`)).body.status_code, 2001, url);
    }
    assert.equal(cpo.partner.profileRequests.length, before, 'nothing forwarded');
  });

  it('charging profile requests are limited per party (RATE_LIMIT_CHARGING_PROFILES)', async () => {
    const replicaPort = await freePort();
    const replica = await startService('ingress', { ...env, HUB_PORT: String(replicaPort), OPERATOR_PORT: '0', RATE_LIMIT_CHARGING_PROFILES: '3' }, /ingress listening/);
    try {
      const toNextMinute = 60_000 - (Date.now() % 60_000);
      if (toNextMinute < 5_000) await new Promise((r) => setTimeout(r, toNextMinute + 100));
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await call(`http://127.0.0.1:${replicaPort}`, 'DELETE', `/ocpi/2.2.1/chargingprofiles/SESSION-1?response_url=${encodeURIComponent(responseUrl(`rl-${i}`))}`, { token: emsp.token });
        statuses.push(res.status);
      }
      // The suite's earlier requests in this minute count too: the limit is reached within four.
      assert.equal(statuses.at(-1), 429);
    } finally {
      await replica.stop();
    }
  });
});
