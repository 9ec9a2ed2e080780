// Consumers never loop on a record. Records the ingress would refuse are
// written straight to the topics (bypassing it), as another producer or an older ingress could: each
// consumer quarantines what it cannot apply and goes on with the next records of the same partition;
// hubctl lists and re-drives them; metrics and /healthz show them; a dependency failure that does not
// clear keeps the partition waiting (nothing skipped) and makes /healthz 503 after the bound.
// Real ingress, projector and dispatcher processes, real Kafka and Postgres.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newEvent, topics } from '@hub/events';
import { call, createTestStack, jsonLogs, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { freePort, hubctl, onboard, until, type OnboardedPlatform, ocpiExample } from './helpers.ts';

type Json = Record<string, unknown>;
const example = ocpiExample;
const receiverModules = [
  { identifier: 'credentials', role: 'SENDER' as const },
  { identifier: 'sessions', role: 'RECEIVER' as const },
  { identifier: 'cdrs', role: 'RECEIVER' as const },
];
/** Postgres has no year 0: timestamptz refuses it (22008), so the read model cannot store the object. */
const YEAR_ZERO = '0000-01-01T00:00:00Z';

interface QuarantineRow {
  id: string;
  group: string;
  topic: string;
  partition: number;
  offset: string;
  ce_type: string | null;
  failure: string;
  reason: string;
  state: string;
}

describe('poison records: quarantined, the partition goes on, re-driven after a fix', () => {
  let stack: TestStack;
  let ingress: ServiceProcess;
  let projector: ServiceProcess;
  let dispatcher: ServiceProcess;
  let env: Record<string, string>;
  let cpo: OnboardedPlatform;
  let emsp: OnboardedPlatform;

  const operator = (service: ServiceProcess) => `http://127.0.0.1:${String(jsonLogs(service).find((l) => typeof l['operatorPort'] === 'number')?.['operatorPort'])}`;
  const health = async (service: ServiceProcess) => {
    const res = await fetch(`${operator(service)}/healthz`);
    return { http: res.status, body: (await res.json()) as { ok: boolean; status: string; problems: Array<{ severity: string; reason: string }> } };
  };
  const metric = async (service: ServiceProcess, name: string, labels: string) => {
    const text = await (await fetch(`${operator(service)}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
    return line ? Number(line.split(' ').pop()) : 0;
  };
  const quarantined = async (group: string): Promise<QuarantineRow[]> => {
    const out = await hubctl(env, ['quarantine', 'list', '--group', group, '--json']);
    assert.equal(out.code, 0, out.stderr);
    return JSON.parse(out.stdout) as QuarantineRow[];
  };
  const location = (id: string, lastUpdated: string): Json => ({ ...example('location_example.json'), country_code: 'NL', party_id: 'STK', id, last_updated: lastUpdated });
  const tariff = (id: string, lastUpdated: string): Json => ({ ...example('tariff_10_025kwh_parking_start.json'), country_code: 'NL', party_id: 'STK', id, last_updated: lastUpdated });
  const session = (id: string, extra: Json = {}): Json => {
    const s = example('session_example_1_simple_start.json');
    return { ...s, country_code: 'NL', party_id: 'STK', id, cdr_token: { ...(s['cdr_token'] as Json), country_code: 'NL', party_id: 'TST' }, last_updated: new Date().toISOString(), ...extra };
  };
  /**
   * Appends straight to the topic, typed as the ingress would. The poison record and the valid one
   * after it are different objects under one Kafka key (same partition, whichever way they are cut
   * into batches): one object's PUTs in one batch would be written once, as the newest, and hide the
   * poison.
   */
  const append = (topic: string, type: string, id: string, data: Json, key = id) =>
    stack.eventLog.append(topic, [newEvent({ type, source: 'test', subject: `NL/STK/${id}`, key: `NL/STK/${key.toUpperCase()}`, data })]);
  const row = async (table: 'locations' | 'tariffs', id: string) =>
    (await stack.pool.query<{ document: Json }>(`select document from ${table} where country_code = 'NL' and party_id = 'STK' and id = $1`, [id.toUpperCase()])).rows[0]?.document;
  const sessionsAt = (id: string) => emsp.partner.received.filter((r) => r.kind === 'session' && r.body['id'] === id);

  before(async () => {
    stack = await createTestStack('poison');
    const port = await freePort();
    env = stack.env({
      HUB_PORT: String(port),
      ALLOW_HTTP_PARTNER_URLS: 'true',
      PARTNER_ALLOWED_HOSTS: '127.0.0.1',
      DELIVERY_RETRY_SCHEDULE_MS: '100,200',
      DELIVERY_TIMEOUT_MS: '1000',
      CONSUMER_STUCK_AFTER_MS: '1500',
    });
    ingress = await startService('ingress', env, /ingress listening/);
    projector = await startService('projector', env, /projector running/);
    dispatcher = await startService('dispatcher', env, /dispatcher running/, 60_000);
    const hub = `http://127.0.0.1:${port}`;
    cpo = await onboard(hub, env, 'CPO', [{ role: 'CPO', countryCode: 'NL', partyId: 'STK' }]);
    emsp = await onboard(hub, env, 'eMSP', [{ role: 'EMSP', countryCode: 'NL', partyId: 'TST' }], receiverModules);
    assert.equal((await hubctl(env, ['routing', 'enable', '--emsp', 'NL/TST', '--cpo', 'NL/STK'])).code, 0);
    assert.ok(cpo.token && call);
  });

  after(async () => {
    await Promise.allSettled([ingress?.stop(), projector?.stop(), dispatcher?.stop(), cpo?.partner.close(), emsp?.partner.close()]);
    await stack?.cleanup();
  });

  it('projector, locations: a location Postgres cannot store is quarantined and the next one of its partition is projected', async () => {
    await append(topics.locations, 'ocpi.locations.location-put.v1', 'POISON-LOC', location('POISON-LOC', YEAR_ZERO));
    // An event whose data is no JSON object (`null`): no document can come of it.
    await stack.eventLog.append(topics.locations, [newEvent({ type: 'ocpi.locations.location-put.v1', source: 'test', subject: 'NL/STK/NULL-LOC', key: 'NL/STK/POISON-LOC', data: null })]);
    await append(topics.locations, 'ocpi.locations.location-put.v1', 'NEXT-LOC', location('NEXT-LOC', '2026-01-02T03:04:05Z'), 'POISON-LOC');
    const doc = await until('the valid location after the poison one is projected', () => row('locations', 'NEXT-LOC'));
    assert.equal(await row('locations', 'POISON-LOC'), undefined);
    assert.equal(doc['last_updated'], '2026-01-02T03:04:05Z');
    const [q, undecodable, ...more] = await quarantined('projector');
    assert.equal(more.length, 0);
    assert.equal(undecodable?.failure, 'undecodable');
    assert.equal(undecodable?.partition, q?.partition);
    assert.equal(q?.topic, stack.eventLog.physical(topics.locations));
    assert.equal(q?.ce_type, 'ocpi.locations.location-put.v1');
    assert.equal(q?.failure, 'record');
    assert.match(q?.reason ?? '', /22008/);
    assert.equal(await metric(projector, 'hub_consumer_quarantined_total', 'topic="' + stack.eventLog.physical(topics.locations) + '"'), 2);
    const h = await until('the projector reports the quarantine', async () => {
      const r = await health(projector);
      return r.body.problems.length > 0 && r;
    });
    assert.equal(h.http, 200);
    assert.equal(h.body.status, 'degraded');
    assert.match(h.body.problems[0]?.reason ?? '', /2 record\(s\) of .*ocpi\.locations\.v1 quarantined by consumer projector/);
  });

  it('projector, tariffs: the same for a tariff', async () => {
    await append(topics.tariffs, 'ocpi.tariffs.tariff-put.v1', 'POISON-TAR', tariff('POISON-TAR', YEAR_ZERO));
    await append(topics.tariffs, 'ocpi.tariffs.tariff-put.v1', 'NEXT-TAR', tariff('NEXT-TAR', '2026-01-02T03:04:05Z'), 'POISON-TAR');
    await until('the valid tariff after the poison one is projected', () => row('tariffs', 'NEXT-TAR'));
    const rows = await quarantined('projector');
    assert.deepEqual(rows.map((r) => [r.topic, r.failure]), [
      [stack.eventLog.physical(topics.locations), 'record'],
      [stack.eventLog.physical(topics.locations), 'undecodable'],
      [stack.eventLog.physical(topics.tariffs), 'record'],
    ]);
  });

  it('dispatcher: a session Postgres cannot store (NUL) and a record that is no OCPI object are quarantined; the next session of the partition reaches the eMSP', async () => {
    await append(topics.sessions, 'ocpi.sessions.session-put.v1', 'S-POISON', session('S-POISON', { meter_id: 'M\u0000X' }));
    await stack.eventLog.append(topics.sessions, [newEvent({ type: 'ocpi.sessions.session-put.v1', source: 'test', subject: 'not-an-object-path', key: 'NL/STK/S-POISON', data: {} })]);
    await append(topics.sessions, 'ocpi.sessions.session-put.v1', 'S-NEXT', session('S-NEXT', { status: 'COMPLETED' }), 'S-POISON');
    await until('the valid session reaches the eMSP', () => sessionsAt('S-NEXT').length > 0);
    assert.deepEqual(sessionsAt('S-NEXT').map((r) => r.body['status']), ['COMPLETED']);
    assert.deepEqual(sessionsAt('S-POISON'), []);
    const rows = await quarantined('dispatcher');
    assert.deepEqual(rows.map((r) => r.failure), ['record', 'undecodable']);
    assert.match(rows[0]?.reason ?? '', /22P05/);
    assert.equal(new Set(rows.map((r) => r.partition)).size, 1);
    assert.equal(await metric(dispatcher, 'hub_consumer_quarantined_total', 'group="dispatcher"'), 2);
    const h = await health(dispatcher);
    assert.equal(h.http, 200);
    assert.equal(h.body.status, 'degraded');
  });

  it('re-drive after a fix: a location and a session refused by a constraint are applied by hubctl quarantine redrive', async () => {
    await stack.pool.query(`alter table locations add constraint poison_test_refuses check (id <> 'REDRIVE-LOC')`);
    await stack.pool.query(`alter table deliveries add constraint poison_test_refuses check (object_id <> 'S-REDRIVE')`);
    await append(topics.locations, 'ocpi.locations.location-put.v1', 'REDRIVE-LOC', location('REDRIVE-LOC', '2026-02-01T00:00:00Z'));
    await append(topics.sessions, 'ocpi.sessions.session-put.v1', 'S-REDRIVE', session('S-REDRIVE'));
    const loc = await until('the location is quarantined', async () => (await quarantined('projector')).find((r) => r.reason.includes('23514')));
    const ses = await until('the session is quarantined', async () => (await quarantined('dispatcher')).find((r) => r.reason.includes('23514')));
    // Still refused: it stays quarantined, with the new reason.
    const again = await hubctl(env, ['quarantine', 'redrive', '--id', loc.id, '--json']);
    assert.equal(again.code, 1, again.stderr);
    assert.equal((JSON.parse(again.stdout) as QuarantineRow[])[0]?.state, 'quarantined');
    await stack.pool.query('alter table locations drop constraint poison_test_refuses');
    await stack.pool.query('alter table deliveries drop constraint poison_test_refuses');
    for (const q of [loc, ses]) {
      const out = await hubctl(env, ['quarantine', 'redrive', '--id', q.id, '--json']);
      assert.equal(out.code, 0, out.stderr);
      assert.equal((JSON.parse(out.stdout) as QuarantineRow[])[0]?.state, 'redriven');
    }
    assert.equal((await row('locations', 'REDRIVE-LOC'))?.['last_updated'], '2026-02-01T00:00:00Z');
    await until('the re-driven session reaches the eMSP', () => sessionsAt('S-REDRIVE').length > 0);
    // The year-zero location is still quarantined; discarding resolves it without applying.
    const [poison] = await quarantined('projector');
    assert.match(poison?.reason ?? '', /22008/);
    assert.equal((await hubctl(env, ['quarantine', 'discard', '--id', poison?.id ?? ''])).code, 0);
    assert.ok(!(await quarantined('projector')).some((r) => r.id === poison?.id));
  });

  it('a dependency failure that does not clear: the partition waits (nothing skipped), hub_consumer_stuck_seconds grows and /healthz is 503 until it clears', async () => {
    // Every tariff write fails as a serialization conflict would (40001: a dependency failure).
    await stack.pool.query(`create function poison_test_conflict() returns trigger language plpgsql as $$ begin raise exception 'test conflict' using errcode = '40001'; end $$`);
    await stack.pool.query('create trigger poison_test_conflict before insert or update on tariffs for each row execute function poison_test_conflict()');
    const positions = async () => (await stack.pool.query<{ n: string }>(`select coalesce(sum(next_offset), 0)::text as n from projection_offsets where model = 'tariffs'`)).rows[0]?.n;
    const before = await positions();
    await append(topics.tariffs, 'ocpi.tariffs.tariff-put.v1', 'STUCK-TAR', tariff('STUCK-TAR', '2026-03-01T00:00:00Z'));
    const h = await until('the projector reports the stuck partition', async () => {
      const r = await health(projector);
      return r.http === 503 && r;
    });
    assert.equal(h.body.status, 'down');
    assert.match(h.body.problems.find((p) => p.severity === 'down')?.reason ?? '', /stuck on .*ocpi\.tariffs\.v1 partition \d+ at offset \d+ .*40001/);
    assert.ok((await metric(projector, 'hub_consumer_stuck_seconds', 'ocpi.tariffs.v1')) > 1);
    assert.equal(await positions(), before, 'the partition did not move');
    assert.equal((await quarantined('projector')).filter((r) => r.topic.endsWith('tariffs.v1') && r.state === 'quarantined').length, 1, 'nothing new quarantined');
    await stack.pool.query('drop trigger poison_test_conflict on tariffs');
    await until('the waiting tariff is projected once the failure clears', () => row('tariffs', 'STUCK-TAR'));
    await until('/healthz is no longer 503', async () => (await health(projector)).http === 200);
  });
});
