// The sandbox (docs/how-to/sandbox.md): a partner onboards on a sandbox hub and runs every flow
// against the sandbox CPO and eMSP. Real ingress, projector and dispatcher processes with
// HUB_SANDBOX=true, real Kafka and Postgres; the counterparts are the real @hub/sandbox servers,
// onboarded by the registry operations and POST credentials; the partner platforms are simulators.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { appendInOrder } from '@hub/event-log';
import { postgresRegistryStore, drainOutbox } from '@hub/store';
import { call, createTestStack, repoRoot, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { startSandbox, tariffCost, type RunningSandbox, type SandboxState } from '@hub/sandbox';
import { assertValid, freePort, hubctl, ocpiExample, onboard, onboard211, onboard230, until, type OnboardedPlatform } from './helpers.ts';

type Json = Record<string, unknown>;

describe('a partner on a sandbox hub, against the sandbox counterparts', () => {
  let stack: TestStack;
  let services: ServiceProcess[] = [];
  let sandbox: RunningSandbox;
  let hub: string;
  let env: Record<string, string>;
  let emsp: OnboardedPlatform; // NL/TST, the partner eMSP
  let cpo: OnboardedPlatform; // BE/BEC, the partner CPO
  let emsp211: OnboardedPlatform | undefined; // NL/OLD, a partner eMSP that speaks OCPI 2.1.1
  let cpo230: OnboardedPlatform | undefined; // FR/NEW, a partner CPO that speaks OCPI 2.3.0
  let state: SandboxState = {};
  const partnerToken = (uid: string): Json => ({ ...ocpiExample('token_example_2_full_rfid.json'), country_code: 'NL', party_id: 'TST', uid, whitelist: 'NEVER', last_updated: new Date().toISOString() });
  const responseUrl = (id: string) => `${emsp.partner.baseUrl}/ocpi/2.2.1/command-results/${id}`;
  const resultOf = (id: string) => emsp.partner.received.find((r) => r.kind === 'command_result' && r.path.endsWith(`/${id}`))?.body;
  const command = (name: string, body: Json) => call<Json>(hub, 'POST', `/ocpi/2.2.1/commands/${name}`, { token: emsp.token, body });
  const sessionsAt = (id: string) => emsp.partner.received.filter((r) => r.kind === 'session' && r.path.endsWith(`/NL/SBX/${id}`)).map((r) => r.body);
  const control = (method: 'GET' | 'POST', path: string, body?: unknown) => call<Json>(sandbox.url, method, path, { token: cpo.token, ...(body === undefined ? {} : { body }) });

  before(async () => {
    stack = await createTestStack('sandbox');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({
      HUB_PORT: String(port),
      HUB_SANDBOX: 'true',
      ALLOW_HTTP_PARTNER_URLS: 'true',
      PARTNER_ALLOWED_HOSTS: '127.0.0.1',
      AUTHORIZE_TIMEOUT_MS: '700',
      COMMAND_GRACE_SECONDS: '1',
      DELIVERY_RETRY_SCHEDULE_MS: '100,200,400',
    });
    services = [
      await startService('ingress', env, /ingress listening/),
      await startService('projector', env, /projector running/, 60_000),
      await startService('dispatcher', env, /dispatcher running/, 60_000),
    ];
    sandbox = await startSandbox({
      hubUrl: hub,
      host: '127.0.0.1',
      port: 0,
      publicBaseUrl: undefined,
      cpo: { countryCode: 'NL', partyId: 'SBX' },
      emsp: { countryCode: 'DE', partyId: 'SBX' },
      operator: { store: postgresRegistryStore(stack.pool), source: 'sandbox-test', actor: 'test' },
      publishAudit: async () => {
        await drainOutbox(stack.pool, (batch) => appendInOrder(stack.eventLog, batch));
      },
      loadState: () => state,
      saveState: (s) => (state = s),
      logger: (await import('@hub/observability')).createLogger({ service: 'sandbox', level: 'warn' }),
      routeEveryMs: 200,
      hubTimeoutMs: 10_000,
      cpoTiming: { sessionTickMs: 300, evseStatusEveryMs: 1_000, tokenPullEveryMs: 1_000, resultDelayMs: 100, silentCommandTimeoutSeconds: 1 },
      emspTiming: { pullEveryMs: 1_000 },
    });
    // The partner's platforms, onboarded as docs/how-to/sandbox.md says: hubctl party register and
    // the credentials exchange; no routing step (the sandbox routes them).
    emsp = await onboard(hub, env, 'Partner eMSP', [{ role: 'EMSP', countryCode: 'NL', partyId: 'TST' }], [
      { identifier: 'credentials', role: 'SENDER' },
      { identifier: 'sessions', role: 'RECEIVER' },
      { identifier: 'cdrs', role: 'RECEIVER' },
    ]);
    cpo = await onboard(hub, env, 'Partner CPO', [{ role: 'CPO', countryCode: 'BE', partyId: 'BEC' }], [
      { identifier: 'credentials', role: 'SENDER' },
      { identifier: 'tokens', role: 'RECEIVER' },
      { identifier: 'commands', role: 'RECEIVER' },
    ]);
  });

  after(async () => {
    await Promise.allSettled([sandbox?.stop(), ...services.map((s) => s.stop()), emsp?.partner.close(), cpo?.partner.close(), emsp211?.partner.close(), cpo230?.partner.close()]);
    await stack?.cleanup();
  });

  it('onboards the counterparts through the credentials exchange and routes every new party to the counterpart of the other role', async () => {
    assert.ok(state.cpo?.hubToken && state.emsp?.hubToken, 'both counterparts hold a hub token from POST credentials');
    const rules = await until('the sandbox routed both partner parties', async () => {
      const out = await hubctl(env, ['routing', 'list', '--json']);
      const list = JSON.parse(out.stdout) as Array<{ emsp: string; cpo: string; enabled: boolean }>;
      const names = list.filter((r) => r.enabled).map((r) => `${r.emsp}->${r.cpo}`);
      return names.includes('NL/TST->NL/SBX') && names.includes('DE/SBX->BE/BEC') ? names : undefined;
    });
    assert.ok(rules.includes('DE/SBX->NL/SBX'), 'the counterparts are routed to each other too');
    const parties = JSON.parse((await hubctl(env, ['party', 'list', '--json'])).stdout) as Array<{ country_code: string; party_id: string; role: string; registered: boolean }>;
    assert.ok(parties.some((p) => p.country_code === 'NL' && p.party_id === 'SBX' && p.role === 'CPO' && p.registered));
    assert.ok(parties.some((p) => p.country_code === 'DE' && p.party_id === 'SBX' && p.role === 'EMSP' && p.registered));
  });

  it('says it is a sandbox on every answer', async () => {
    const versions = await call(hub, 'GET', '/ocpi/versions', { token: emsp.token });
    assert.equal(versions.headers['x-hub-environment'], 'sandbox');
    const refused = await call(hub, 'GET', '/ocpi/versions', { token: 'not-a-token' });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers['x-hub-environment'], 'sandbox');
  });

  it('serves the sandbox CPO locations (EVSEs, connectors) and tariff to the partner eMSP pull', async () => {
    const locations = await until('the sandbox locations in the pull', async () => {
      const res = await call<Json[]>(hub, 'GET', '/ocpi/2.2.1/locations?limit=100', { token: emsp.token });
      const data = res.body.data ?? [];
      return data.some((l) => l['id'] === 'SBX-LOC-1') ? data : undefined;
    });
    const loc = locations.find((l) => l['id'] === 'SBX-LOC-1') ?? {};
    const evses = loc['evses'] as Json[];
    assert.equal(evses.length, 2);
    assert.deepEqual((evses[0]?.['connectors'] as Json[])[0]?.['tariff_ids'], ['SBX-TARIFF-1']);
    const tariffs = await call<Json[]>(hub, 'GET', '/ocpi/2.2.1/tariffs', { token: emsp.token });
    assert.deepEqual(tariffs.body.data?.map((t) => t['id']), ['SBX-TARIFF-1']);
    // The sandbox eMSP pulls them as well.
    await until('the sandbox eMSP pulled the sandbox locations', () => sandbox.emsp.pulled.locations.some((l) => l['id'] === 'SBX-LOC-1'));
    // Now and then the sandbox CPO PATCHes an EVSE's status (SBX-EVSE-2 goes OUTOFORDER and back).
    await until('an EVSE status PATCH in the read model', async () => {
      const res = await call<Json>(hub, 'GET', '/ocpi/2.2.1/locations/NL/SBX/SBX-LOC-1/SBX-EVSE-2', { token: emsp.token });
      return res.body.data?.['status'] === 'OUTOFORDER' ? true : undefined;
    });
  });

  it('runs START_SESSION to a CDR: PENDING, ACTIVE with kWh growing, COMPLETED after STOP_SESSION, then a CDR priced by the tariff', async () => {
    await until('the location is known to the hub', async () => (await call(hub, 'GET', '/ocpi/2.2.1/locations/NL/SBX/SBX-LOC-1', { token: emsp.token })).body.status_code === 1000);
    const start = await command('START_SESSION', { response_url: responseUrl('start-1'), token: partnerToken('TST-CARD-1'), location_id: 'SBX-LOC-1', evse_uid: 'SBX-EVSE-1' });
    assert.equal(start.body.status_code, 1000, start.text);
    assert.equal(start.body.data?.['result'], 'ACCEPTED');
    assert.deepEqual(await until('START_SESSION result', () => resultOf('start-1')), { result: 'ACCEPTED' });
    const first = await until('a session at the partner eMSP', () => emsp.partner.received.find((r) => r.kind === 'session' && r.path.includes('/NL/SBX/'))?.body);
    const sessionId = String(first['id']);
    assert.equal(first['status'], 'PENDING');
    assert.equal((first['cdr_token'] as Json)['uid'], 'TST-CARD-1');
    const growing = await until('the session ACTIVE with kWh growing', () => {
      const active = sessionsAt(sessionId).filter((s) => s['status'] === 'ACTIVE');
      const kwhs = active.map((s) => Number(s['kwh']));
      return kwhs.length >= 2 && kwhs.at(-1)! > kwhs[0]! ? kwhs : undefined;
    });
    assert.ok(growing.at(-1)! > 0);
    const stop = await command('STOP_SESSION', { response_url: responseUrl('stop-1'), session_id: sessionId });
    assert.equal(stop.body.data?.['result'], 'ACCEPTED', stop.text);
    assert.deepEqual(await until('STOP_SESSION result', () => resultOf('stop-1')), { result: 'ACCEPTED' });
    const completed = await until('the session COMPLETED', () => sessionsAt(sessionId).find((s) => s['status'] === 'COMPLETED'));
    assert.ok(completed['end_date_time']);
    const cdr = await until('the CDR at the partner eMSP', () => emsp.partner.received.find((r) => r.kind === 'cdr' && r.body['session_id'] === sessionId)?.body);
    assert.equal(cdr['total_energy'], completed['kwh']);
    assert.deepEqual(cdr['total_cost'], tariffCost(Number(cdr['total_energy'])).total);
    assert.equal((cdr['tariffs'] as Json[])[0]?.['id'], 'SBX-TARIFF-1');
    // A stopped session cannot be stopped again: the sandbox CPO rejects it.
    const again = await command('STOP_SESSION', { response_url: responseUrl('stop-2'), session_id: sessionId });
    assert.equal(again.body.data?.['result'], 'REJECTED', again.text);
  });

  it('answers the other commands, REJECTED at SBX-REJECT and TIMEOUT at SBX-TIMEOUT', async () => {
    const reserve = await command('RESERVE_NOW', { response_url: responseUrl('reserve-1'), token: partnerToken('TST-CARD-1'), expiry_date: new Date(Date.now() + 3_600_000).toISOString(), reservation_id: 'RES-1', location_id: 'SBX-LOC-1', evse_uid: 'SBX-EVSE-2' });
    assert.equal(reserve.body.data?.['result'], 'ACCEPTED', reserve.text);
    assert.deepEqual(await until('RESERVE_NOW result', () => resultOf('reserve-1')), { result: 'ACCEPTED' });
    const cancel = await command('CANCEL_RESERVATION', { response_url: responseUrl('cancel-1'), reservation_id: 'RES-1' });
    assert.equal(cancel.body.data?.['result'], 'ACCEPTED', cancel.text);
    assert.deepEqual(await until('CANCEL_RESERVATION result', () => resultOf('cancel-1')), { result: 'ACCEPTED' });
    const unlock = await command('UNLOCK_CONNECTOR', { response_url: responseUrl('unlock-1'), location_id: 'SBX-LOC-1', evse_uid: 'SBX-EVSE-1', connector_id: '1' });
    assert.equal(unlock.body.data?.['result'], 'ACCEPTED', unlock.text);
    assert.deepEqual(await until('UNLOCK_CONNECTOR result', () => resultOf('unlock-1')), { result: 'ACCEPTED' });

    await until('the rule locations are known', async () => (await call(hub, 'GET', '/ocpi/2.2.1/locations/NL/SBX/SBX-TIMEOUT', { token: emsp.token })).body.status_code === 1000);
    const rejected = await command('START_SESSION', { response_url: responseUrl('start-rejected'), token: partnerToken('TST-CARD-1'), location_id: 'SBX-REJECT', evse_uid: 'SBX-REJECT-EVSE' });
    assert.equal(rejected.body.data?.['result'], 'REJECTED', rejected.text);
    const silent = await command('UNLOCK_CONNECTOR', { response_url: responseUrl('unlock-timeout'), location_id: 'SBX-TIMEOUT', evse_uid: 'SBX-TIMEOUT-EVSE', connector_id: '1' });
    assert.equal(silent.body.data?.['result'], 'ACCEPTED', silent.text);
    assert.deepEqual(await until('the hub TIMEOUT for the silent command', () => resultOf('unlock-timeout'), 20_000), { result: 'TIMEOUT' });
    // A START_SESSION with a token the rules block is accepted and then FAILED by the charge point.
    const blocked = await command('START_SESSION', { response_url: responseUrl('start-blocked'), token: partnerToken('BLOCKED-TST'), location_id: 'SBX-LOC-1', evse_uid: 'SBX-EVSE-2' });
    assert.equal(blocked.body.data?.['result'], 'ACCEPTED', blocked.text);
    assert.deepEqual(await until('FAILED result', () => resultOf('start-blocked')), { result: 'FAILED' });
  });

  it('answers real-time authorization by the token rules, asked by an eMSP and by a CPO', async () => {
    const viaEmsp = (uid: string) =>
      call<Json>(hub, 'PUT', `/ocpi/2.2.1/tokens/NL/TST/${uid}/authorize`, { token: emsp.token, body: { location_id: 'SBX-LOC-1' } });
    for (const [uid, allowed] of [['TST-CARD-1', 'ALLOWED'], ['BLOCKED-1', 'BLOCKED'], ['NOTALLOWED-1', 'NOT_ALLOWED'], ['EXPIRED-1', 'EXPIRED'], ['NOCREDIT-1', 'NO_CREDIT']] as const) {
      const res = await viaEmsp(uid);
      assert.equal(res.body.status_code, 1000, `${uid}: ${res.text}`);
      assert.equal(res.body.data?.['allowed'], allowed, uid);
    }
    const unknown = await viaEmsp('UNKNOWN-1');
    assert.equal(unknown.body.data?.['allowed'], 'UNKNOWN', unknown.text);
    assert.equal(unknown.body.status_code, 2004, unknown.text);
    const timeout = await viaEmsp('TIMEOUT-1');
    assert.equal(timeout.body.data?.['allowed'], 'UNKNOWN', timeout.text);
    assert.equal(timeout.body.status_code, 4002, timeout.text);

    // The partner CPO asks for the sandbox eMSP's tokens (pushed by it at start).
    await until('the sandbox tokens in the read model', async () => (await stack.pool.query<{ n: string }>("select count(*) as n from tokens where country_code = 'DE' and party_id = 'SBX'")).rows[0]?.n === '7');
    const viaCpo = (uid: string) => call<Json>(hub, 'POST', `/ocpi/2.2.1/tokens/${uid}/authorize?type=RFID`, { token: cpo.token, body: { location_id: 'LOC1' } });
    assert.equal((await viaCpo('ALLOWED0001')).body.data?.['allowed'], 'ALLOWED');
    assert.equal((await viaCpo('BLOCKED0001')).body.data?.['allowed'], 'BLOCKED');
    const unknownAtEmsp = await viaCpo('UNKNOWN0001');
    assert.equal(unknownAtEmsp.status, 404, unknownAtEmsp.text);
    assert.equal(unknownAtEmsp.body.status_code, 2004);
  });

  it('carries tokens both ways: the partner eMSP push reaches the sandbox CPO, the sandbox eMSP tokens reach the partner CPO', async () => {
    const token = partnerToken('TST-CARD-9');
    const pushed = await call(hub, 'PUT', '/ocpi/2.2.1/tokens/NL/TST/TST-CARD-9?type=RFID', { token: emsp.token, body: token });
    assert.equal(pushed.body.status_code, 1000, pushed.text);
    const received = await until('the token at the sandbox CPO', () => sandbox.cpo.tokens.get('NL/TST/TST-CARD-9'));
    assert.equal(received['contract_id'], token['contract_id']);
    assert.ok((await sandbox.cpo.pullTokens()) >= 1, 'the sandbox CPO pulls the tokens of routed eMSPs');
    const uids = await until('the sandbox eMSP tokens at the partner CPO', () => {
      const got = cpo.partner.received.filter((r) => r.kind === 'token').map((r) => String(r.body['uid']));
      return got.includes('ALLOWED0001') && got.includes('TIMEOUT0001') ? got : undefined;
    });
    assert.ok(uids.includes('BLOCKED0001'));
  });

  it('has the sandbox eMSP send a command and an authorization to the partner CPO on its sandbox-only call', async () => {
    assert.equal((await call(hub, 'PUT', '/ocpi/2.2.1/locations/BE/BEC/LOC1', { token: cpo.token, body: ocpiExample('location_example.json') })).body.status_code, 1000);
    await call(hub, 'GET', '/ocpi/2.2.1/locations/BE/BEC/LOC1', { token: cpo.token });
    const sent = await control('POST', '/sandbox/emsp/commands/START_SESSION', { location_id: 'LOC1', evse_uid: '3256' });
    assert.equal(sent.body.status_code, 1000, sent.text);
    const data = sent.body.data as { command_id: string; hub_answer: { body: { data?: Json } } };
    assert.equal(data.hub_answer.body.data?.['result'], 'ACCEPTED');
    const forwarded = cpo.partner.commands.at(-1);
    assert.equal(forwarded?.command, 'START_SESSION');
    assert.equal((forwarded?.body['token'] as Json)['party_id'], 'SBX', 'the sandbox eMSP token');
    const result = await until('the result at the sandbox eMSP', async () => {
      const r = await control('GET', `/sandbox/emsp/command-results/${data.command_id}`);
      return r.body.status_code === 1000 ? r.body.data : undefined;
    });
    assert.deepEqual(result, { result: 'ACCEPTED' });

    const auth = await control('POST', '/sandbox/emsp/authorize', { token_uid: 'ALLOWED0001', location: { location_id: 'LOC1' } });
    assert.equal(auth.body.status_code, 1000, auth.text);
    assert.equal((auth.body.data as { hub_answer: { body: { data: Json } } }).hub_answer.body.data['allowed'], 'ALLOWED');
    assert.ok(cpo.partner.requests.some((r) => r.method === 'PUT' && r.path === '/ocpi/2.2.1/tokens/DE/SBX/ALLOWED0001/authorize'));

    // Only for the caller's own CPO parties, and only with a hub token.
    const foreign = await control('POST', '/sandbox/emsp/commands/UNLOCK_CONNECTOR', { cpo: { country_code: 'NL', party_id: 'SBX' }, location_id: 'SBX-LOC-1', evse_uid: 'SBX-EVSE-1', connector_id: '1' });
    assert.equal(foreign.status, 403, foreign.text);
    const anonymous = await call(sandbox.url, 'POST', '/sandbox/emsp/authorize', { body: {} });
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.body.status_code, 2000);
  });

  it('serves a partner eMSP that speaks OCPI 2.1.1: it is routed, pulls the sandbox locations and runs START_SESSION to a CDR, all in 2.1.1', async () => {
    const platform = await onboard211(hub, env, 'Partner eMSP 2.1.1', { role: 'EMSP', countryCode: 'NL', partyId: 'OLD' }, [
      { identifier: 'credentials', role: 'SENDER' },
      { identifier: 'sessions', role: 'RECEIVER' },
      { identifier: 'cdrs', role: 'RECEIVER' },
    ]);
    emsp211 = platform;
    const location = await until('the sandbox locations in the 2.1.1 pull (routed by the sandbox)', async () => {
      const res = await call<Json[]>(hub, 'GET', '/ocpi/2.1.1/locations?limit=100', { token: platform.token });
      return (res.body.data ?? []).find((l) => l['id'] === 'SBX-LOC-1');
    });
    await assertValid('ocpi-2.1.1/location.json', location);
    const token211 = { uid: 'OLD-CARD-1', type: 'RFID', auth_id: 'NL-OLD-C00000001-1', issuer: 'Partner eMSP 2.1.1', valid: true, whitelist: 'ALLOWED', last_updated: new Date().toISOString() };
    const response = (id: string) => `${platform.partner.baseUrl}/ocpi/2.1.1/command-results/${id}`;
    const result = (id: string) => platform.partner.received.find((r) => r.kind === 'command_result' && r.path.endsWith(`/${id}`))?.body;
    const start = await call<Json>(hub, 'POST', '/ocpi/2.1.1/commands/START_SESSION', { token: platform.token, body: { response_url: response('start-211'), token: token211, location_id: 'SBX-LOC-1', evse_uid: 'SBX-EVSE-1' } });
    assert.equal(start.body.status_code, 1000, start.text);
    assert.equal(start.body.data?.['result'], 'ACCEPTED');
    assert.equal((await until('START_SESSION result in 2.1.1', () => result('start-211')))['result'], 'ACCEPTED');
    const session = await until('an ACTIVE session with energy at the 2.1.1 eMSP', () => platform.partner.received.find((r) => r.kind === 'session' && r.body['status'] === 'ACTIVE' && Number(r.body['kwh']) > 0)?.body);
    await assertValid('ocpi-2.1.1/session.json', session);
    assert.equal(session['auth_id'], 'NL-OLD-C00000001-1');
    const stop = await call<Json>(hub, 'POST', '/ocpi/2.1.1/commands/STOP_SESSION', { token: platform.token, body: { response_url: response('stop-211'), session_id: session['id'] } });
    assert.equal(stop.body.data?.['result'], 'ACCEPTED', stop.text);
    const cdr = await until('the CDR at the 2.1.1 eMSP', () => platform.partner.received.find((r) => r.kind === 'cdr')?.body);
    await assertValid('ocpi-2.1.1/cdr.json', cdr);
    assert.equal(cdr['auth_id'], 'NL-OLD-C00000001-1');
    assert.ok(Number(cdr['total_energy']) > 0);
  });

  it('serves a partner CPO that speaks OCPI 2.3.0: routed, receives the sandbox eMSP tokens and its authorizations in 2.3.0, and passes the partner check in 2.3.0', async () => {
    const platform = await onboard230(hub, env, 'Partner CPO 2.3.0', { role: 'CPO', countryCode: 'FR', partyId: 'NEW' }, [
      { identifier: 'credentials', role: 'SENDER' },
      { identifier: 'tokens', role: 'RECEIVER' },
      { identifier: 'commands', role: 'RECEIVER' },
    ]);
    cpo230 = platform;
    // Routed by the sandbox to the sandbox eMSP: its tokens are re-sent to the new CPO, in 2.3.0.
    const token = await until('a sandbox eMSP token at the 2.3.0 CPO', () => platform.partner.received.find((r) => r.kind === 'token' && r.body['uid'] === 'BLOCKED0001'), 30_000);
    assert.match(token.path, /^\/ocpi\/2\.3\.0\/tokens\/DE\/SBX\/BLOCKED0001/);
    await assertValid('ocpi-2.3.0/token.json', token.body);
    const res = await call<Json>(hub, 'POST', '/ocpi/2.3.0/tokens/BLOCKED0001/authorize?type=RFID', { token: platform.token, body: { location_id: 'LOC1' } });
    assert.equal(res.body.status_code, 1000, res.text);
    await assertValid('ocpi-2.3.0/authorization_info.json', res.body.data);
    assert.equal(res.body.data?.['allowed'], 'BLOCKED');
    const out = await hubctl(env, ['partner', 'check', 'FR/NEW', '--json']);
    const report = JSON.parse(out.stdout) as { version: string; ok: boolean; checks: Array<{ check: string; ok: boolean }> };
    assert.equal(report.version, '2.3.0', out.stdout);
    assert.deepEqual(report.checks.filter((c) => !c.ok), [], out.stdout);
    assert.equal(out.code, 0, out.stderr);
    for (const check of ['probe tokens', 'probe commands']) assert.ok(report.checks.some((c) => c.check === check && c.ok), `${check}: ${out.stdout}`);
  });

  it('runs as the process npm run sandbox starts, and stops at once and cleanly on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-'));
    const port = await freePort();
    const child = spawn(process.execPath, [join(repoRoot, 'packages', 'sandbox', 'src', 'main.ts')], {
      env: { ...env, SANDBOX_HUB_URL: hub, SANDBOX_PORT: String(port), SANDBOX_CPO: 'BE/SB2', SANDBOX_EMSP: 'FR/SB2', SANDBOX_STATE_FILE: join(dir, 'state.json'), SANDBOX_SESSION_TICK_MS: '200', SANDBOX_EVSE_STATUS_EVERY_MS: '200' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await until('the sandbox process running', () => output.includes('"sandbox running"'), 30_000);
      const info = await call<Json>(`http://127.0.0.1:${port}`, 'GET', '/sandbox');
      assert.deepEqual((info.body.data?.['cpo'] as Json)['party_id'], 'SB2');
      const parties = JSON.parse((await hubctl(env, ['party', 'list', '--json'])).stdout) as Array<{ country_code: string; party_id: string; registered: boolean }>;
      assert.ok(parties.some((p) => p.country_code === 'BE' && p.party_id === 'SB2' && p.registered), 'its CPO exchanged credentials');
      const stoppedAt = Date.now();
      child.kill('SIGTERM');
      assert.equal(await exited, 0, output.slice(-2000));
      assert.ok(Date.now() - stoppedAt < 5_000, 'its timers and server do not hold it');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('lets a newcomer watch a whole session end in a CDR with npm run sandbox -- try-emsp', async () => {
    const out = await hubctl(env, ['party', 'register', '--role', 'EMSP', '--country', 'NL', '--party', 'NEW', '--name', 'Newcomer', '--json']);
    const { initial_token: initialToken } = JSON.parse(out.stdout) as { initial_token: string };
    const child = spawn(process.execPath, [join(repoRoot, 'packages', 'sandbox', 'src', 'try-emsp.ts'), '--hub', hub, '--party', 'NL/NEW', '--token', initialToken], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    assert.equal(code, 0, output);
    assert.match(output, /X-Hub-Environment: sandbox/);
    assert.match(output, /session SBX-\w+: ACTIVE/);
    assert.match(output, /6\. CDR CDR-SBX-\w+: [\d.]+ kWh/);
  });
});
