// Session PATCH end to end (mod_sessions.asciidoc, Receiver interface, PATCH Method):
// a simulated CPO PUTs and PATCHes sessions, the eMSP's simulated receiver gets the full merged
// session each time (newest wins as for PUT), and PATCHes the hub cannot apply are refused with a
// clear OCPI error and nothing appended. Real ingress and dispatcher processes, Kafka and Postgres.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { topics } from '@hub/events';
import { call, createTestStack, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { freePort, hubctl, onboard, readTopic, until, type OnboardedPlatform, ocpiExample } from './helpers.ts';

type Json = Record<string, unknown>;
const example = ocpiExample;
const receiverModules = [
  { identifier: 'credentials', role: 'SENDER' as const },
  { identifier: 'sessions', role: 'RECEIVER' as const },
];

describe('session PATCH: merged into the session held and delivered whole', () => {
  let stack: TestStack;
  let ingress: ServiceProcess;
  let dispatcher: ServiceProcess;
  let hub: string;
  let env: Record<string, string>;
  let cpo: OnboardedPlatform;
  let emsp: OnboardedPlatform;

  const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 10, minute)).toISOString();
  const session = (id: string, extra: Json = {}): Json => {
    const s = example('session_example_2_short_finished.json');
    return { ...s, id, country_code: 'NL', party_id: 'STK', status: 'ACTIVE', cdr_token: { ...(s['cdr_token'] as Json), country_code: 'NL', party_id: 'TST' }, last_updated: at(0), ...extra };
  };
  const putSession = (body: Json) => call(hub, 'PUT', `/ocpi/2.2.1/sessions/NL/STK/${String(body['id'])}`, { token: cpo.token, body });
  const patchSession = (id: string, body: unknown, options: { token?: string; party?: string } = {}) =>
    call(hub, 'PATCH', `/ocpi/2.2.1/sessions/${options.party ?? 'NL/STK'}/${id}`, { token: options.token ?? cpo.token, body });
  const received = (id: string) => emsp.partner.received.filter((r) => r.kind === 'session' && r.body['id'] === id);
  const sessionEnd = async () => [...(await stack.eventLog.latestOffsets(topics.sessions)).values()].reduce((a, b) => a + b, 0n);

  before(async () => {
    stack = await createTestStack('session_patch');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', READ_YOUR_WRITES_TIMEOUT_MS: '2000' });
    ingress = await startService('ingress', env, /ingress listening/);
    dispatcher = await startService('dispatcher', env, /dispatcher running/, 60_000);
    cpo = await onboard(hub, env, 'CPO', [{ role: 'CPO', countryCode: 'NL', partyId: 'STK' }]);
    emsp = await onboard(hub, env, 'eMSP', [{ role: 'EMSP', countryCode: 'NL', partyId: 'TST' }], receiverModules);
    assert.equal((await hubctl(env, ['routing', 'enable', '--emsp', 'NL/TST', '--cpo', 'NL/STK'])).code, 0);
  });

  after(async () => {
    await Promise.allSettled([ingress?.stop(), dispatcher?.stop(), cpo?.partner.close(), emsp?.partner.close()]);
    await stack?.cleanup();
  });

  it('PUT then PATCH (kwh, status) at once: the eMSP receives the full merged session', async () => {
    const put = session('SP-1');
    assert.equal((await putSession(put)).body.status_code, 1000);
    // Sent right after the PUT: the hub waits for the dispatcher to hold the session, not refusing it.
    const patch = { kwh: 11.5, status: 'COMPLETED', end_date_time: at(5), last_updated: at(5) };
    const res = await patchSession('SP-1', patch);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status_code, 1000, res.text);
    const got = await until('merged session delivered', () => received('SP-1').find((r) => r.body['status'] === 'COMPLETED'));
    assert.deepEqual(got.body, { ...put, ...patch });
    assert.equal(got.path, '/ocpi/2.2.1/sessions/NL/STK/SP-1');
    // The event on the topic is the PATCH as received.
    const events = await readTopic(stack, topics.sessions, (rs) => rs.some((r) => r.headers['ce_type'] === 'ocpi.sessions.session-patched.v1' && r.key === 'NL/STK/SP-1'), 5_000);
    const event = events.find((r) => r.headers['ce_type'] === 'ocpi.sessions.session-patched.v1' && r.key === 'NL/STK/SP-1');
    assert.deepEqual(JSON.parse(event?.value ?? '{}'), patch);
    assert.equal(event?.headers['ocpi-from'], 'NL/STK');
  });

  it('PATCH with charging_periods: added to the stored list (mod_sessions.asciidoc, PATCH Method), delivered whole', async () => {
    const put = session('SP-2');
    const stored = (put['charging_periods'] as unknown[]) ?? [];
    assert.ok(stored.length > 0, 'the example session has charging periods');
    assert.equal((await putSession(put)).body.status_code, 1000);
    const added = example('session_patch_example_charging_period.json');
    const patch = { ...added, last_updated: at(6) };
    assert.equal((await patchSession('SP-2', patch)).body.status_code, 1000);
    const got = await until('session with the added period delivered', () => received('SP-2').find((r) => r.body['last_updated'] === at(6)));
    assert.deepEqual(got.body['charging_periods'], [...stored, ...(added['charging_periods'] as unknown[])]);
    assert.deepEqual(got.body, { ...put, ...patch, charging_periods: [...stored, ...(added['charging_periods'] as unknown[])] });
    // An empty list changes nothing; null would remove the list, which takes a PUT: refused.
    assert.equal((await patchSession('SP-2', { charging_periods: [], last_updated: at(7) })).body.status_code, 1000);
    const again = await until('session after the empty list delivered', () => received('SP-2').find((r) => r.body['last_updated'] === at(7)));
    assert.deepEqual(again.body['charging_periods'], [...stored, ...(added['charging_periods'] as unknown[])]);
    const removal = await patchSession('SP-2', { charging_periods: null, last_updated: at(8) });
    assert.equal(removal.body.status_code, 2001, removal.text);
  });

  it('a PATCH older than the session held is not delivered over the newer state', async () => {
    assert.equal((await putSession(session('SP-3', { kwh: 20, last_updated: at(10) }))).body.status_code, 1000);
    await until('PUT delivered', () => received('SP-3').length > 0);
    // A late PATCH (its last_updated before the PUT's), then a newer one as a marker.
    assert.equal((await patchSession('SP-3', { kwh: 1, status: 'INVALID', last_updated: at(9) })).body.status_code, 1000);
    assert.equal((await patchSession('SP-3', { kwh: 21, last_updated: at(11) })).body.status_code, 1000);
    const newest = await until('newer PATCH delivered', () => received('SP-3').find((r) => r.body['kwh'] === 21));
    assert.equal(newest.body['status'], 'ACTIVE');
    assert.deepEqual(received('SP-3').map((r) => r.body['kwh']), [20, 21], 'the older PATCH never reached the eMSP');
    // Not lost silently: the dispatcher says which PATCH it did not apply, and why.
    assert.ok(dispatcher.logs.some((l) => l.includes('older than the session held') && l.includes('"sessionId":"SP-3"')), 'superseded PATCH logged');
  });

  it('a session id in another case is the same session (CiString); it is delivered under the id as first pushed', async () => {
    const put = session('Sp-Case');
    assert.equal((await putSession(put)).body.status_code, 1000);
    assert.equal((await call(hub, 'PATCH', '/ocpi/2.2.1/sessions/nl/stk/SP-CASE', { token: cpo.token, body: { kwh: 3, last_updated: at(12) } })).body.status_code, 1000);
    const got = await until('merged session delivered', () => received('Sp-Case').find((r) => r.body['kwh'] === 3));
    assert.equal(got.path, '/ocpi/2.2.1/sessions/NL/STK/Sp-Case');
  });

  it('PATCH of a session the hub does not hold: UNKNOWN_SESSION (HTTP 404, OCPI 2000) and nothing appended', async () => {
    const before = await sessionEnd();
    const res = await patchSession('SP-NEVER-PUT', { kwh: 1, last_updated: at(13) });
    assert.equal(res.status, 404, res.text);
    assert.equal(res.body.status_code, 2000);
    assert.match(res.body.status_message ?? '', /Unknown session.*SP-NEVER-PUT.*PUT the full session first/);
    assert.equal(await sessionEnd(), before, 'nothing appended');
  });

  it('PATCH without last_updated, with a bad field or an eMSP-less cdr_token: 2001, nothing appended', async () => {
    assert.equal((await putSession(session('SP-BAD'))).body.status_code, 1000);
    await until('PUT delivered', () => received('SP-BAD').length > 0);
    const before = await sessionEnd();
    const noTime = await patchSession('SP-BAD', { kwh: 2 });
    assert.equal(noTime.status, 200);
    assert.equal(noTime.body.status_code, 2001);
    assert.match(noTime.body.status_message ?? '', /last_updated/);
    assert.equal((await patchSession('SP-BAD', { status: 'CHARGING', last_updated: at(14) })).body.status_code, 2001);
    assert.equal((await patchSession('SP-BAD', { id: 'OTHER', last_updated: at(14) })).body.status_code, 2001);
    assert.equal((await patchSession('SP-BAD', { cdr_token: { uid: 'U', type: 'RFID', contract_id: 'C', country_code: 'NL', party_id: '' }, last_updated: at(14) })).body.status_code, 2001);
    assert.equal((await patchSession('SP-BAD', [])).body.status_code, 2001);
    assert.equal(await sessionEnd(), before, 'nothing appended');
  });

  it('PATCH of another CPO\'s session, or by an eMSP: 403 like PUT', async () => {
    const foreign = await patchSession('SP-1', { kwh: 1, last_updated: at(15) }, { party: 'DE/OTH' });
    assert.equal(foreign.status, 403, foreign.text);
    assert.equal((await call(hub, 'PUT', '/ocpi/2.2.1/sessions/DE/OTH/SP-1', { token: cpo.token, body: { ...session('SP-1'), country_code: 'DE', party_id: 'OTH' } })).status, 403);
    assert.equal((await patchSession('SP-1', { kwh: 1, last_updated: at(15) }, { token: emsp.token })).status, 403);
  });

  it('with the dispatcher stopped, a PATCH of a session just PUT is answered 503 (retry), never refused; after it runs again, accepted', async () => {
    await dispatcher.stop();
    try {
      assert.equal((await putSession(session('SP-LATE'))).body.status_code, 1000);
      const before = await sessionEnd();
      const res = await patchSession('SP-LATE', { kwh: 4, last_updated: at(16) });
      assert.equal(res.status, 503, res.text);
      assert.equal(res.body.status_code, 3000);
      assert.equal(await sessionEnd(), before, 'nothing appended');
    } finally {
      dispatcher = await startService('dispatcher', env, /dispatcher running/, 60_000);
    }
    assert.equal((await patchSession('SP-LATE', { kwh: 4, last_updated: at(16) })).body.status_code, 1000);
    await until('merged session delivered', () => received('SP-LATE').find((r) => r.body['kwh'] === 4));
  });
});
