// Sessions and CDRs end to end: a simulated CPO pushes, the dispatcher delivers to simulated
// eMSP receivers (real HTTP servers) with retries, dead letters, unroutable records, re-drive and
// replay. Real ingress and dispatcher processes, real Kafka and Postgres.
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
  { identifier: 'cdrs', role: 'RECEIVER' as const },
];


describe('sessions and CDRs: ingest, deliver, retry, re-drive, replay', () => {
  let stack: TestStack;
  let ingress: ServiceProcess;
  let dispatcher: ServiceProcess;
  let hub: string;
  let env: Record<string, string>;
  let cpo: OnboardedPlatform;
  let emspA: OnboardedPlatform; // NL/TST
  let emspB: OnboardedPlatform; // DE/TNM
  let emspC: OnboardedPlatform; // FR/NOR: registered without receiver endpoints

  const session = (id: string, status: string, emsp = { country_code: 'NL', party_id: 'TST' }, extra: Json = {}) => {
    const s = example('session_example_1_simple_start.json');
    return { ...s, id, status, cdr_token: { ...(s['cdr_token'] as Json), ...emsp }, last_updated: new Date().toISOString(), ...extra };
  };
  const cdr = (id: string, emsp = { country_code: 'DE', party_id: 'TNM' }) => {
    const c = example('cdr_example.json');
    return { ...c, id, cdr_token: { ...(c['cdr_token'] as Json), ...emsp } };
  };
  const putSession = (body: Json, headers: Record<string, string> = {}) =>
    call(hub, 'PUT', `/ocpi/2.2.1/sessions/NL/STK/${String(body['id'])}`, { token: cpo.token, body, headers });
  const postCdr = (body: Json) => call(hub, 'POST', '/ocpi/2.2.1/cdrs', { token: cpo.token, body });
  const sessionsAt = (p: OnboardedPlatform, id: string) => p.partner.received.filter((r) => r.kind === 'session' && r.body['id'] === id);

  before(async () => {
    stack = await createTestStack('deliveries');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({
      HUB_PORT: String(port),
      ALLOW_HTTP_PARTNER_URLS: 'true',
      PARTNER_ALLOWED_HOSTS: '127.0.0.1',
      DELIVERY_RETRY_SCHEDULE_MS: '100,200,300,400,500,500,500,500,500,500',
      DELIVERY_TIMEOUT_MS: '1000',
    });
    ingress = await startService('ingress', env, /ingress listening/);
    dispatcher = await startService('dispatcher', env, /dispatcher running/, 60_000);
    cpo = await onboard(hub, env, 'CPO', [
      { role: 'CPO', countryCode: 'NL', partyId: 'STK' },
      { role: 'CPO', countryCode: 'BE', partyId: 'BEC' },
    ]);
    emspA = await onboard(hub, env, 'eMSP A', [{ role: 'EMSP', countryCode: 'NL', partyId: 'TST' }], receiverModules);
    emspB = await onboard(hub, env, 'eMSP B', [{ role: 'EMSP', countryCode: 'DE', partyId: 'TNM' }], receiverModules);
    emspC = await onboard(hub, env, 'eMSP C', [{ role: 'EMSP', countryCode: 'FR', partyId: 'NOR' }]);
    for (const [e, c] of [['NL/TST', 'NL/STK'], ['DE/TNM', 'NL/STK'], ['DE/TNM', 'BE/BEC'], ['NL/TST', 'BE/BEC'], ['FR/NOR', 'NL/STK']]) {
      assert.equal((await hubctl(env, ['routing', 'enable', '--emsp', e ?? '', '--cpo', c ?? ''])).code, 0);
    }
  });

  after(async () => {
    await Promise.allSettled([ingress?.stop(), dispatcher?.stop(), ...[cpo, emspA, emspB, emspC].map((p) => p?.partner.close())]);
    await stack?.cleanup();
  });

  it('happy path: PENDING, ACTIVE, COMPLETED and a CDR reach the eMSP once each, in order, with routing headers', async () => {
    for (const status of ['PENDING', 'ACTIVE', 'COMPLETED']) {
      const res = await putSession(session('S-HAPPY', status), { 'X-Correlation-ID': `corr-${status}`, 'X-Request-ID': `req-${status}` });
      assert.equal(res.body.status_code, 1000, res.text);
      await until(`${status} delivered`, () => sessionsAt(emspA, 'S-HAPPY').some((r) => r.body['status'] === status));
    }
    const received = sessionsAt(emspA, 'S-HAPPY');
    assert.deepEqual(received.map((r) => r.body['status']), ['PENDING', 'ACTIVE', 'COMPLETED']);
    const first = received[0];
    assert.equal(first?.path, '/ocpi/2.2.1/sessions/NL/STK/S-HAPPY');
    assert.equal(first?.headers['authorization'], `Token ${Buffer.from(emspA.partner.token).toString('base64')}`);
    assert.equal(first?.headers['x-correlation-id'], 'corr-PENDING');
    assert.notEqual(first?.headers['x-request-id'], 'req-PENDING');
    assert.equal(first?.headers['ocpi-from-country-code'], 'NL');
    assert.equal(first?.headers['ocpi-from-party-id'], 'STK');
    assert.equal(first?.headers['ocpi-to-country-code'], 'NL');
    assert.equal(first?.headers['ocpi-to-party-id'], 'TST');
    assert.deepEqual(first?.body, { ...session('S-HAPPY', 'PENDING'), last_updated: first?.body['last_updated'] });

    const res = await postCdr(cdr('CDR-HAPPY'));
    assert.equal(res.body.status_code, 1000, res.text);
    assert.equal(res.headers['location'], `${hub}/ocpi/2.2.1/cdrs/BE/BEC/CDR-HAPPY`);
    const got = await until('CDR delivered', () => emspB.partner.received.find((r) => r.kind === 'cdr' && r.body['id'] === 'CDR-HAPPY'));
    assert.deepEqual(got.body, cdr('CDR-HAPPY'));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(emspB.partner.received.filter((r) => r.body['id'] === 'CDR-HAPPY').length, 1, 'delivered once');
    // The owning CPO can GET what the hub holds; nobody else.
    assert.deepEqual((await call(hub, 'GET', '/ocpi/2.2.1/cdrs/BE/BEC/CDR-HAPPY', { token: cpo.token })).body.data, cdr('CDR-HAPPY'));
    assert.equal((await call(hub, 'GET', '/ocpi/2.2.1/cdrs/BE/BEC/CDR-HAPPY', { token: emspB.token })).status, 403);
    // A credit CDR's id may be 39 long (mod_cdrs.asciidoc, CDR Object): its Location works too.
    const creditId = `CDR-HAPPY-${'C'.repeat(29)}`;
    assert.equal(creditId.length, 39);
    const creditCdr = { ...cdr(creditId), credit: true, credit_reference_id: 'CDR-HAPPY' };
    const credit = await postCdr(creditCdr);
    assert.equal(credit.body.status_code, 1000, credit.text);
    const location = new URL(credit.headers['location'] ?? '');
    assert.deepEqual((await call(hub, 'GET', location.pathname, { token: cpo.token })).body.data, creditCdr);
  });

  it('CDRs are immutable: an identical re-POST succeeds without a second event, a different one is refused', async () => {
    const again = await postCdr(cdr('CDR-HAPPY'));
    assert.equal(again.body.status_code, 1000);
    assert.equal(again.headers['location'], `${hub}/ocpi/2.2.1/cdrs/BE/BEC/CDR-HAPPY`);
    const reordered = Object.fromEntries(Object.entries(cdr('CDR-HAPPY')).reverse());
    assert.equal((await postCdr(reordered)).body.status_code, 1000, 'field order does not make a CDR different');
    const changed = await postCdr({ ...cdr('CDR-HAPPY'), total_energy: 99 });
    assert.equal(changed.body.status_code, 2001);
    assert.match(changed.body.status_message ?? '', /immutable/);
    // Both CDRs of the happy path (CDR-HAPPY and the credit CDR) are in the topic; CDR-HAPPY once.
    const events = await readTopic(stack, topics.cdrs, (rs) => rs.filter((r) => r.key.startsWith('BE/BEC/CDR-HAPPY')).length >= 2, 5_000);
    assert.equal(events.filter((e) => e.key === 'BE/BEC/CDR-HAPPY').length, 1);
  });

  it('the Errors table: each undeliverable case is refused or kept as unroutable with its reason, and re-drivable', async () => {
    // No eMSP in cdr_token: refused at once, nothing appended.
    const noToken = session('S-NOTOKEN', 'ACTIVE');
    delete (noToken as Json)['cdr_token'];
    assert.equal((await putSession(noToken)).body.status_code, 2001);
    const incomplete = session('S-INCOMPLETE', 'ACTIVE', { country_code: 'NL', party_id: '' });
    assert.equal((await putSession(incomplete)).body.status_code, 2001);
    // eMSP unknown to the hub, eMSP without a receiver URL, no routing rule: accepted, kept unroutable.
    assert.equal((await putSession(session('S-UNKNOWN', 'ACTIVE', { country_code: 'XX', party_id: 'ZZZ' }))).body.status_code, 1000);
    assert.equal((await putSession(session('S-NOURL', 'ACTIVE', { country_code: 'FR', party_id: 'NOR' }))).body.status_code, 1000);
    assert.equal((await postCdr({ ...cdr('CDR-NORULE', { country_code: 'FR', party_id: 'NOR' }) })).body.status_code, 1000);
    const list = async () =>
      JSON.parse((await hubctl(env, ['deliveries', 'list', '--state', 'unroutable', '--json'])).stdout) as Array<{ object_id: string; reason: string; emsp: string }>;
    const rows = await until('unroutable records', async () => {
      const r = await list();
      return r.length >= 3 ? r : undefined;
    });
    const reason = (id: string) => rows.find((r) => r.object_id === id)?.reason ?? '';
    assert.match(reason('S-UNKNOWN'), /unknown eMSP XX\/ZZZ/);
    assert.match(reason('S-NOURL'), /no sessions receiver URL/);
    assert.match(reason('CDR-NORULE'), /no active routing rule FR\/NOR <- BE\/BEC/);
    assert.equal(emspC.partner.received.length, 0);
    // The operator fixes the causes and re-drives: now delivered.
    assert.equal((await hubctl(env, ['endpoint', 'set', '--country', 'FR', '--party', 'NOR', '--role', 'EMSP', '--module', 'sessions', '--url', `${emspC.partner.baseUrl}/ocpi/2.2.1/sessions`])).code, 0);
    assert.equal((await hubctl(env, ['endpoint', 'set', '--country', 'FR', '--party', 'NOR', '--role', 'EMSP', '--module', 'cdrs', '--url', `${emspC.partner.baseUrl}/ocpi/2.2.1/cdrs`])).code, 0);
    assert.equal((await hubctl(env, ['routing', 'enable', '--emsp', 'FR/NOR', '--cpo', 'BE/BEC'])).code, 0);
    const redrive = JSON.parse((await hubctl(env, ['deliveries', 'redrive', '--emsp', 'FR/NOR', '--json'])).stdout) as { redriven: number };
    assert.equal(redrive.redriven, 2);
    await until('re-driven records delivered', () => emspC.partner.received.length === 2);
    assert.deepEqual(emspC.partner.received.map((r) => r.body['id']).sort(), ['CDR-NORULE', 'S-NOURL']);
    // The unknown eMSP stays visible until someone fixes it.
    assert.deepEqual((await list()).map((r) => r.object_id), ['S-UNKNOWN']);
  });

  it('an eMSP receiver down for a while gets everything once it is back, the newest session state last', async () => {
    emspA.partner.receiverMode = 'fail';
    for (const status of ['PENDING', 'ACTIVE', 'COMPLETED']) assert.equal((await putSession(session('S-DOWN', status))).body.status_code, 1000);
    await new Promise((r) => setTimeout(r, 800)); // several failed attempts
    emspA.partner.receiverMode = 'ok';
    await until('S-DOWN completed delivered', () => sessionsAt(emspA, 'S-DOWN').some((r) => r.body['status'] === 'COMPLETED'));
    await new Promise((r) => setTimeout(r, 500));
    const statuses = sessionsAt(emspA, 'S-DOWN').map((r) => String(r.body['status']));
    assert.equal(statuses.at(-1), 'COMPLETED', `newest last: ${statuses.join(',')}`);
    const order = ['PENDING', 'ACTIVE', 'COMPLETED'];
    assert.deepEqual(statuses, [...statuses].sort((a, b) => order.indexOf(a) - order.indexOf(b)), 'never an older state after a newer one');
  });

  it('one eMSP hanging does not delay deliveries to another', async () => {
    emspA.partner.receiverMode = 'hang';
    for (let i = 0; i < 20; i++) assert.equal((await putSession(session(`S-HANG-${i}`, 'ACTIVE'))).body.status_code, 1000);
    const started = Date.now();
    for (let i = 0; i < 5; i++) assert.equal((await putSession(session(`S-FAST-${i}`, 'ACTIVE', { country_code: 'DE', party_id: 'TNM' }))).body.status_code, 1000);
    await until('eMSP B received all', () => [0, 1, 2, 3, 4].every((i) => sessionsAt(emspB, `S-FAST-${i}`).length > 0), 10_000);
    assert.ok(Date.now() - started < 3_000, `eMSP B served in ${Date.now() - started} ms while A hangs`);
    emspA.partner.receiverMode = 'ok';
    await until('eMSP A catches up', () => [...Array(20).keys()].every((i) => sessionsAt(emspA, `S-HANG-${i}`).length > 0), 30_000);
  });

  it('retries end in a dead letter; hubctl lists and re-drives it', async () => {
    emspB.partner.receiverMode = 'reject';
    assert.equal((await postCdr(cdr('CDR-DEAD'))).body.status_code, 1000);
    const dead = await until('dead letter', async () => {
      const rows = JSON.parse((await hubctl(env, ['deliveries', 'list', '--state', 'dead', '--emsp', 'DE/TNM', '--json'])).stdout) as Array<{ id: string; object_id: string; attempts: number; last_error: string }>;
      return rows.find((r) => r.object_id === 'CDR-DEAD');
    }, 30_000);
    assert.equal(dead.attempts, 11, 'first attempt plus the ten retries of the schedule');
    assert.match(dead.last_error, /OCPI status_code 2001/);
    emspB.partner.receiverMode = 'ok';
    assert.equal((await hubctl(env, ['deliveries', 'redrive', '--id', dead.id])).code, 0);
    await until('dead letter delivered after re-drive', () => emspB.partner.received.some((r) => r.body['id'] === 'CDR-DEAD'));
  });

  it('the dispatcher SIGKILLed mid-stream and restarted loses nothing', async () => {
    const pushes: Array<Promise<unknown>> = [];
    for (let i = 0; i < 150; i++) {
      pushes.push(putSession(session(`S-KILL-${i}`, 'COMPLETED', { country_code: 'DE', party_id: 'TNM' })));
      if (i === 60) dispatcher.child.kill('SIGKILL');
    }
    await Promise.all(pushes);
    await dispatcher.stop();
    dispatcher = await startService('dispatcher', env, /dispatcher running/, 60_000);
    await until('all 150 delivered', () => [...Array(150).keys()].every((i) => sessionsAt(emspB, `S-KILL-${i}`).length > 0), 60_000);
  });

  it('after Postgres lost recent delivery rows (a restore, a failover) the restarted dispatcher reads their events again', async () => {
    await dispatcher.stop();
    const sessionsTopic = stack.eventLog.physical(topics.sessions);
    const stored = await stack.pool.query<{ n: string }>('select count(*) as n from delivery_positions where topic = $1', [sessionsTopic]);
    assert.ok(Number(stored.rows[0]?.n) > 0, 'the dispatcher stores its positions');
    // Simulate the loss: the rows of ten sessions and the positions that went with them are gone,
    // while Kafka's committed offsets are past their events.
    const lost = [...Array(10).keys()].map((i) => `S-KILL-${i}`);
    await stack.pool.query("delete from deliveries where kind = 'session' and object_id = any($1)", [lost]);
    await stack.pool.query('update delivery_positions set next_offset = 0 where topic = $1', [sessionsTopic]);
    dispatcher = await startService('dispatcher', env, /dispatcher running/, 60_000);
    await until('the lost rows enqueued again', async () => {
      const { rows } = await stack.pool.query<{ n: string }>("select count(*) as n from deliveries where kind = 'session' and object_id = any($1)", [lost]);
      return Number(rows[0]?.n) === lost.length;
    }, 30_000);
  });

  it('hubctl replays a topic to one eMSP: dry run counts, the replay delivers again', async () => {
    const dry = JSON.parse((await hubctl(env, ['deliveries', 'replay', '--topic', 'cdrs', '--emsp', 'DE/TNM', '--from-offset', '0', '--dry-run', '--json'])).stdout) as { matched: number; enqueued: number };
    assert.ok(dry.matched >= 2);
    assert.equal(dry.enqueued, 0);
    // From a point in time: everything since an hour ago is the same set; from tomorrow, nothing.
    const since = (t: string) => hubctl(env, ['deliveries', 'replay', '--topic', 'cdrs', '--emsp', 'DE/TNM', '--from-time', t, '--dry-run', '--json']);
    const hourAgo = JSON.parse((await since(new Date(Date.now() - 3_600_000).toISOString())).stdout) as { matched: number };
    assert.equal(hourAgo.matched, dry.matched);
    const tomorrow = JSON.parse((await since(new Date(Date.now() + 86_400_000).toISOString())).stdout) as { matched: number };
    assert.equal(tomorrow.matched, 0);
    const before = emspB.partner.received.filter((r) => r.kind === 'cdr').length;
    const replay = await hubctl(env, ['deliveries', 'replay', '--topic', 'cdrs', '--emsp', 'DE/TNM', '--from-offset', '0', '--rate', '100', '--json']);
    assert.equal(replay.code, 0, replay.stderr);
    assert.equal((JSON.parse(replay.stdout) as { enqueued: number }).enqueued, dry.matched);
    await until('replayed CDRs delivered', () => emspB.partner.received.filter((r) => r.kind === 'cdr').length >= before + dry.matched);
    assert.equal(emspA.partner.received.filter((r) => r.body['id'] === 'CDR-HAPPY').length, 0, 'other eMSPs get nothing');
  });
});
