// Commands (second half): eMSP -> hub -> CPO, then CPO -> hub callback -> eMSP response_url,
// with TIMEOUT, late results, guessed callback ids and unsafe response_urls. Real ingress, projector
// and dispatcher processes, real Kafka and Postgres, CPO and eMSP as real HTTP servers.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { call, createTestStack, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { freePort, hubctl, onboard, readTopic, until, type OnboardedPlatform, ocpiExample } from './helpers.ts';

type Json = Record<string, unknown>;
const example = ocpiExample;


describe('commands forwarded to the CPO with results back to the eMSP', () => {
  let stack: TestStack;
  let services: ServiceProcess[] = [];
  let hub: string;
  let env: Record<string, string>;
  let cpo: OnboardedPlatform; // BE/BEC
  let emsp: OnboardedPlatform; // NL/TST
  const token = () => ({ ...(example('token_example_2_full_rfid.json')) });
  const responseUrl = (id: string) => `${emsp.partner.baseUrl}/ocpi/2.2.1/command-results/${id}`;
  const send = (command: string, body: Json, headers: Record<string, string> = {}) => call<Json>(hub, 'POST', `/ocpi/2.2.1/commands/${command}`, { token: emsp.token, body, headers });
  const resultsFor = (id: string) => emsp.partner.received.filter((r) => r.kind === 'command_result' && r.path.endsWith(`/${id}`));

  before(async () => {
    stack = await createTestStack('commands');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', AUTHORIZE_TIMEOUT_MS: '700', COMMAND_GRACE_SECONDS: '1', DELIVERY_RETRY_SCHEDULE_MS: '100,200,400' });
    services = [
      await startService('ingress', env, /ingress listening/),
      await startService('projector', env, /projector running/, 60_000),
      await startService('dispatcher', env, /dispatcher running/, 60_000),
    ];
    cpo = await onboard(hub, env, 'CPO', [{ role: 'CPO', countryCode: 'BE', partyId: 'BEC' }], [
      { identifier: 'credentials', role: 'SENDER' },
      { identifier: 'commands', role: 'RECEIVER' },
    ]);
    emsp = await onboard(hub, env, 'eMSP', [{ role: 'EMSP', countryCode: 'NL', partyId: 'TST' }], [
      { identifier: 'credentials', role: 'SENDER' },
      { identifier: 'sessions', role: 'RECEIVER' },
    ]);
    assert.equal((await hubctl(env, ['routing', 'enable', '--emsp', 'NL/TST', '--cpo', 'BE/BEC'])).code, 0);
    assert.equal((await call(hub, 'PUT', '/ocpi/2.2.1/locations/BE/BEC/LOC1', { token: cpo.token, body: example('location_example.json') })).body.status_code, 1000);
    await call(hub, 'GET', '/ocpi/2.2.1/locations/BE/BEC/LOC1', { token: cpo.token });
    // A session the CPO pushed, for STOP_SESSION.
    const session = { ...example('session_example_1_simple_start.json'), country_code: 'BE', party_id: 'BEC', id: 'SESSION-1' };
    assert.equal((await call(hub, 'PUT', '/ocpi/2.2.1/sessions/BE/BEC/SESSION-1', { token: cpo.token, body: session })).body.status_code, 1000);
    await until('session delivered', () => emsp.partner.received.some((r) => r.kind === 'session'));
  });

  after(async () => {
    await Promise.allSettled([...services.map((s) => s.stop()), cpo?.partner.close(), emsp?.partner.close()]);
    await stack?.cleanup();
  });

  it('START_SESSION end to end: the CPO gets the hub callback, the eMSP gets the immediate answer and the result', async () => {
    const res = await send('START_SESSION', { response_url: responseUrl('start-1'), token: token(), location_id: 'LOC1', evse_uid: '3256' }, { 'X-Correlation-ID': 'corr-start' });
    assert.equal(res.body.status_code, 1000, res.text);
    assert.deepEqual(res.body.data, { result: 'ACCEPTED', timeout: 30 });
    const forwarded = cpo.partner.commands.at(-1);
    assert.equal(forwarded?.command, 'START_SESSION');
    const callback = String(forwarded?.body['response_url']);
    assert.match(callback, new RegExp(`^${hub}/ocpi/2\\.2\\.1/commands/callback/[0-9a-f-]{36}$`), 'response_url rewritten to the hub');
    const result = await until('result at the eMSP', () => resultsFor('start-1')[0]);
    assert.deepEqual(result.body, { result: 'ACCEPTED' });
    assert.equal(result.headers['x-correlation-id'], 'corr-start');
    assert.equal(result.headers['authorization'], `Token ${Buffer.from(emsp.partner.token).toString('base64')}`);
    // Every step is an event on the commands topic, keyed by the command id.
    const commandId = callback.split('/').at(-1) ?? '';
    const events = await readTopic(stack, 'ocpi.commands.v1', (rs) => rs.filter((r) => r.key === commandId).length >= 3, 10_000);
    assert.deepEqual(
      events.filter((e) => e.key === commandId).map((e) => e.headers['ce_type']),
      ['ocpi.commands.requested.v1', 'ocpi.commands.cpo-responded.v1', 'ocpi.commands.result-received.v1'],
    );
    assert.ok(events.filter((e) => e.key === commandId).every((e) => e.headers['x-correlation-id'] === 'corr-start'));
    // Used once: a second result for the same id is refused and not forwarded.
    const again = await request(callback, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ result: 'FAILED' }) });
    assert.equal(again.statusCode, 404);
    await again.body.text();
  });

  it('STOP_SESSION goes to the CPO of the session, RESERVE_NOW and CANCEL_RESERVATION to the CPO of the reservation', async () => {
    assert.equal((await send('STOP_SESSION', { response_url: responseUrl('stop-1'), session_id: 'SESSION-1' })).body.data?.['result'], 'ACCEPTED');
    assert.equal(cpo.partner.commands.at(-1)?.command, 'STOP_SESSION');
    await until('stop result', () => resultsFor('stop-1')[0]);
    const reserve = await send('RESERVE_NOW', { response_url: responseUrl('reserve-1'), token: token(), expiry_date: '2030-01-01T00:00:00Z', reservation_id: 'RES-1', location_id: 'LOC1' });
    assert.equal(reserve.body.data?.['result'], 'ACCEPTED');
    assert.equal((await send('CANCEL_RESERVATION', { response_url: responseUrl('cancel-1'), reservation_id: 'RES-1' })).body.data?.['result'], 'ACCEPTED');
    assert.equal(cpo.partner.commands.at(-1)?.command, 'CANCEL_RESERVATION');
    await until('cancel result', () => resultsFor('cancel-1')[0]);
  });

  it('UNLOCK_CONNECTOR goes to the CPO of the location, with the result back; an unknown connector is REJECTED', async () => {
    // mod_commands.asciidoc, UnlockConnector Object: location_id, evse_uid and connector_id of the CPO's location.
    const res = await send('UNLOCK_CONNECTOR', { response_url: responseUrl('unlock-1'), location_id: 'LOC1', evse_uid: '3256', connector_id: '2' });
    assert.equal(res.body.status_code, 1000, res.text);
    assert.equal(res.body.data?.['result'], 'ACCEPTED');
    const forwarded = cpo.partner.commands.at(-1);
    assert.equal(forwarded?.command, 'UNLOCK_CONNECTOR');
    assert.deepEqual({ ...forwarded?.body, response_url: undefined }, { response_url: undefined, location_id: 'LOC1', evse_uid: '3256', connector_id: '2' });
    assert.deepEqual((await until('unlock result at the eMSP', () => resultsFor('unlock-1')[0])).body, { result: 'ACCEPTED' });
    const before = cpo.partner.commands.length;
    const unknown = await send('UNLOCK_CONNECTOR', { response_url: responseUrl('unlock-2'), location_id: 'LOC1', evse_uid: '3256', connector_id: '9' });
    assert.deepEqual([unknown.body.status_code, unknown.body.data?.['result']], [1000, 'REJECTED']);
    assert.equal(cpo.partner.commands.length, before, 'an unknown connector is not forwarded');
  });

  it('the Errors rows: unknown location or EVSE, unknown session, no routing, CPO unreachable give REJECTED', async () => {
    const before = cpo.partner.commands.length;
    const cases: Array<[string, Json, Record<string, string>?]> = [
      ['START_SESSION', { response_url: responseUrl('e1'), token: token(), location_id: 'NOPE' }],
      ['START_SESSION', { response_url: responseUrl('e2'), token: token(), location_id: 'LOC1', evse_uid: 'NOPE' }],
      ['STOP_SESSION', { response_url: responseUrl('e3'), session_id: 'NOPE' }],
      ['CANCEL_RESERVATION', { response_url: responseUrl('e4'), reservation_id: 'NOPE' }],
      ['START_SESSION', { response_url: responseUrl('e5'), token: token(), location_id: 'LOC1' }, { 'OCPI-to-country-code': 'NL', 'OCPI-to-party-id': 'XXX' }],
    ];
    for (const [command, body, headers] of cases) {
      const res = await send(command, body, headers ?? {});
      assert.equal(res.body.status_code, 1000);
      assert.equal(res.body.data?.['result'], 'REJECTED', `${command} ${JSON.stringify(body)}`);
    }
    assert.equal(cpo.partner.commands.length, before, 'nothing forwarded');
    cpo.partner.commandAnswer = 'hang';
    const hanging = await send('START_SESSION', { response_url: responseUrl('e6'), token: token(), location_id: 'LOC1' });
    assert.equal(hanging.body.data?.['result'], 'REJECTED');
    cpo.partner.commandAnswer = 'ACCEPTED';
    assert.equal((await send('UNLOCK_CONNECTOR', { response_url: responseUrl('e7') })).body.status_code, 2001);
    assert.equal((await send('START_SESSION', { token: token(), location_id: 'LOC1' })).body.status_code, 2001, 'response_url required');
  });

  it('a CPO that never calls back: the hub sends TIMEOUT; a late result is recorded, not forwarded', async () => {
    cpo.partner.commandResult = 'none';
    cpo.partner.commandTimeoutSeconds = 1;
    const res = await send('START_SESSION', { response_url: responseUrl('timeout-1'), token: token(), location_id: 'LOC1' });
    assert.deepEqual(res.body.data, { result: 'ACCEPTED', timeout: 1 });
    const callback = String(cpo.partner.commands.at(-1)?.body['response_url']);
    const timeout = await until('TIMEOUT at the eMSP', () => resultsFor('timeout-1')[0], 15_000);
    assert.deepEqual(timeout.body, { result: 'TIMEOUT' });
    const late = await request(callback, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ result: 'ACCEPTED' }) });
    assert.equal(late.statusCode, 200);
    await late.body.text();
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(resultsFor('timeout-1').length, 1, 'the late result is not forwarded');
    const id = callback.split('/').at(-1);
    const { rows } = await stack.pool.query<{ state: string; late_result: Json }>('select state, late_result from commands where id = $1', [id]);
    assert.equal(rows[0]?.state, 'timed_out');
    assert.deepEqual(rows[0]?.late_result, { result: 'ACCEPTED' });
    cpo.partner.commandResult = 'ACCEPTED';
    cpo.partner.commandTimeoutSeconds = 30;
  });

  it('1,000 callbacks with random ids are all refused and nothing is forwarded', async () => {
    const before = emsp.partner.received.length;
    for (let i = 0; i < 1000; i++) {
      const id = i % 10 === 0 ? `not-a-uuid-${i}` : randomUUID();
      const res = await request(`${hub}/ocpi/2.2.1/commands/callback/${id}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ result: 'ACCEPTED' }) });
      assert.equal(res.statusCode, 404);
      await res.body.text();
    }
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(emsp.partner.received.length, before);
  });

  it('a response_url pointing elsewhere is refused (other host, 127.0.0.1 on another port, 169.254.169.254)', async () => {
    const before = cpo.partner.commands.length;
    for (const url of ['https://attacker.example.com/results', 'http://127.0.0.1:9/results', 'http://169.254.169.254/latest/meta-data']) {
      const res = await send('START_SESSION', { response_url: url, token: token(), location_id: 'LOC1' });
      assert.equal(res.body.status_code, 2001, url);
      assert.match(res.body.status_message ?? '', /response_url/);
    }
    assert.equal(cpo.partner.commands.length, before);
  });

  it('commands are limited per party across two ingress replicas', async () => {
    const ports = [await freePort(), await freePort()];
    const replicas = await Promise.all(ports.map((p) => startService('ingress', { ...env, HUB_PORT: String(p), OPERATOR_PORT: '0', RATE_LIMIT_COMMANDS: '3' }, /ingress listening/)));
    try {
      const toNextMinute = 60_000 - (Date.now() % 60_000);
      if (toNextMinute < 5_000) await new Promise((r) => setTimeout(r, toNextMinute + 100));
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await call(`http://127.0.0.1:${ports[i % 2]}`, 'POST', '/ocpi/2.2.1/commands/STOP_SESSION', { token: emsp.token, body: { response_url: responseUrl(`rl-${i}`), session_id: 'SESSION-1' } });
        statuses.push(res.status);
      }
      // The suite's earlier commands in this minute count too: the limit is reached within four.
      assert.equal(statuses.at(-1), 429);
    } finally {
      await Promise.all(replicas.map((r) => r.stop()));
    }
  });
});
