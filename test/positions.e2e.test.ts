// Never silently skip data. A database that holds positions of another Kafka
// cluster or beyond the topics' ends (a second checkout sharing ocpi_hub with another broker, a topic
// recreated) makes the projector and the dispatcher refuse to run: /healthz 503 naming the fix, one
// error line, hub_consumer_positions_mismatch. After `hubctl positions reset` both run, and the read
// model and the delivery rows equal what the current topics hold. Real processes, Kafka and Postgres.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newEvent, topics } from '@hub/events';
import { createTestStack, jsonLogs, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { hubctl, until } from './helpers.ts';

type Json = Record<string, unknown>;

describe('positions of another cluster or beyond the end: consumers refuse, hubctl positions reset fixes', () => {
  let stack: TestStack;
  let projector: ServiceProcess | undefined;
  let dispatcher: ServiceProcess | undefined;
  let env: Record<string, string>;

  const operator = (service: ServiceProcess) => `http://127.0.0.1:${String(jsonLogs(service).find((l) => typeof l['operatorPort'] === 'number')?.['operatorPort'])}`;
  const health = async (service: ServiceProcess) => {
    const res = await fetch(`${operator(service)}/healthz`);
    return { http: res.status, body: (await res.json()) as { status: string; problems: Array<{ severity: string; reason: string }> } };
  };
  const metric = async (service: ServiceProcess, name: string, labels: string) => {
    const text = await (await fetch(`${operator(service)}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
    return line === undefined ? undefined : Number(line.split(' ').pop());
  };
  const locations = ['LOC-1', 'LOC-2', 'LOC-3'].map((id, i) => ({ country_code: 'NL', party_id: 'STK', id, last_updated: `2026-01-0${i + 1}T00:00:00Z` }));
  const sessions = ['S-1', 'S-2'].map((id) => ({ country_code: 'NL', party_id: 'STK', id, cdr_token: { country_code: 'DE', party_id: 'EMS', uid: 'U1' }, last_updated: '2026-01-01T00:00:00Z' }));

  before(async () => {
    stack = await createTestStack('positions');
    env = stack.env({ CONSUMER_STUCK_AFTER_MS: '60000' });
    for (let i = 0; ; i++) {
      // Right after topic creation a partition may have no leader yet.
      try {
        await stack.eventLog.append(topics.locations, locations.map((l) => newEvent({ type: 'ocpi.locations.location-put.v1', source: 'test', subject: `NL/STK/${l.id}`, key: `NL/STK/${l.id}`, data: l })));
        break;
      } catch (e) {
        if (i > 50) throw e;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    await stack.eventLog.append(topics.sessions, sessions.map((s) => newEvent({ type: 'ocpi.sessions.session-put.v1', source: 'test', subject: `NL/STK/${s.id}`, key: `NL/STK/${s.id}`, data: s, to: 'DE/EMS' })));
    // What a database used with another Kafka holds: the projector's positions bound to another
    // cluster (and far beyond these topics' ends), the dispatcher's beyond the ends with no binding
    // (stored before migration 015).
    const physicalLocations = stack.eventLog.physical(topics.locations);
    await stack.pool.query(`insert into projection_offsets (model, generation, partition, next_offset) select 'locations', 1, p, 1000 from generate_series(0, 5) p`);
    await stack.pool.query(`insert into position_bindings (consumer_group, topic, cluster_id, partitions, starts, ends) values ('projector', $1, 'another-cluster', 6, '{}', '{}')`, [physicalLocations]);
    await stack.pool.query(`insert into delivery_positions (consumer_group, topic, partition, next_offset) select 'dispatcher', $1, p, 500 from generate_series(0, 11) p`, [stack.eventLog.physical(topics.sessions)]);
  });

  after(async () => {
    await Promise.allSettled([projector?.stop(), dispatcher?.stop()]);
    await stack?.cleanup();
  });

  it('the projector and the dispatcher refuse to run: 503 naming the fix, one error line, the metric; nothing is projected', async () => {
    projector = await startService('projector', env, /projector running/);
    dispatcher = await startService('dispatcher', env, /dispatcher running/, 60_000);
    const locationsTopic = stack.eventLog.physical(topics.locations);
    const sessionsTopic = stack.eventLog.physical(topics.sessions);

    const p = await health(projector);
    assert.equal(p.http, 503);
    assert.equal(p.body.status, 'down');
    const pReason = p.body.problems.find((x) => x.severity === 'down')?.reason ?? '';
    assert.match(pReason, new RegExp(`${locationsTopic}: its positions were taken from Kafka cluster another-cluster`));
    assert.match(pReason, /hubctl positions reset --consumer projector/);
    assert.equal(await metric(projector, 'hub_consumer_positions_mismatch', `topic="${locationsTopic}"`), 1);

    const d = await health(dispatcher);
    assert.equal(d.http, 503);
    const dReason = d.body.problems.find((x) => x.severity === 'down')?.reason ?? '';
    assert.match(dReason, /the position 500 of partition \d+ is beyond its end \d+/);
    assert.match(dReason, /hubctl positions reset --consumer dispatcher/);
    assert.equal(await metric(dispatcher, 'hub_consumer_positions_mismatch', `topic="${sessionsTopic}"`), 1);

    // Still refusing after a recheck, with one error line each (not one per recheck).
    await new Promise((r) => setTimeout(r, 6_000));
    assert.equal((await health(projector)).http, 503);
    for (const [service, fix] of [[projector, 'projector'], [dispatcher, 'dispatcher']] as const) {
      const errors = jsonLogs(service).filter((l) => l['level'] === 'error' && String(l['message']).includes(`hubctl positions reset --consumer ${fix}`));
      assert.equal(errors.length, 1, `${fix}: ${JSON.stringify(errors)}`);
    }
    assert.equal((await stack.pool.query('select 1 from locations')).rowCount, 0);
    assert.equal((await stack.pool.query('select 1 from deliveries')).rowCount, 0);
  });

  it('after hubctl positions reset both run, and the read model and deliveries equal the current topics', async () => {
    assert.ok(projector && dispatcher);
    const resetProjector = await hubctl(env, ['positions', 'reset', '--consumer', 'projector']);
    assert.equal(resetProjector.code, 0, resetProjector.stderr);
    assert.match(resetProjector.stdout, /locations rebuilt from the current topic as generation \d+: 3 events, 3 rows; positions bound/);
    const resetDispatcher = await hubctl(env, ['positions', 'reset', '--consumer', 'dispatcher']);
    assert.equal(resetDispatcher.code, 0, resetDispatcher.stderr);

    const p = projector;
    const d = dispatcher;
    await until('the projector runs again', async () => (await health(p)).http === 200, 30_000);
    await until('the dispatcher runs again', async () => (await health(d)).http === 200, 30_000);
    assert.equal(await metric(p, 'hub_consumer_positions_mismatch', `topic="${stack.eventLog.physical(topics.locations)}"`), 0);

    const rows = await stack.pool.query<{ document: Json }>('select document from locations where generation = (select active from read_model_generations where model = $1) order by id', ['locations']);
    assert.deepEqual(rows.rows.map((r) => r.document), locations);
    const deliveries = await until('both sessions become delivery rows', async () => {
      const r = await stack.pool.query<{ object_id: string }>("select object_id from deliveries where kind = 'session' order by object_id");
      return r.rows.length === 2 ? r.rows.map((x) => x.object_id) : undefined;
    }, 30_000);
    assert.deepEqual(deliveries, ['S-1', 'S-2']);

    // The live projector applies what arrives now (its positions are bound and within the topic).
    const next = { country_code: 'NL', party_id: 'STK', id: 'LOC-4', last_updated: '2026-02-01T00:00:00Z' };
    await stack.eventLog.append(topics.locations, [newEvent({ type: 'ocpi.locations.location-put.v1', source: 'test', subject: 'NL/STK/LOC-4', key: 'NL/STK/LOC-4', data: next })]);
    await until('a new location is projected', async () => (await stack.pool.query("select 1 from locations where id = 'LOC-4'")).rowCount === 1, 30_000);
  });
});
