// Every service replicated: two ingress, two projectors, two dispatchers and two
// probers on one three-broker cluster under a steady CPO load; one of each is SIGKILLed in turn. The
// read model must equal a clean replay (exactly-once projection across rebalances), no acknowledged
// session or CDR lost, deliveries sent twice only within the documented at-least-once (a dispatcher
// killed with deliveries in flight), one probe per partner per interval across the probers (one holds
// the lease, the other takes over when it dies), and the registry outbox published once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { topics } from '@hub/events';
import { call, jsonLogs, startService, type ServiceProcess } from '@hub/testing';
import { freePort, hubctl, onboard, until, type OnboardedPlatform } from '../helpers.ts';
import { keepLogs, LOADED_TOPICS, serviceEnv, startClusterUnderTest, type ClusterUnderTest } from './cluster-fixture.ts';
import { acknowledged, LOCATIONS, locationBody, retryable, startLoad } from './load.ts';
import { awaitDeliveries, awaitProjected, duplicateCauses, duplicateDetail, faultRows, figures, printFaultTable, readModelRows, readTopics, replayReadModel, warnings, type FaultWindow } from './verify.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const receivers = [
  { identifier: 'credentials', role: 'SENDER' as const },
  { identifier: 'sessions', role: 'RECEIVER' as const },
  { identifier: 'cdrs', role: 'RECEIVER' as const },
];
const PROBE_INTERVAL_MS = 1000;
const CONCURRENCY_PER_EMSP = 8;

describe('every service replicated on three brokers', () => {
  let cut: ClusterUnderTest;
  let env: Record<string, string>;
  const hubs: string[] = [];
  const ingress: ServiceProcess[] = [];
  const projectors: ServiceProcess[] = [];
  const dispatchers: ServiceProcess[] = [];
  const probers: ServiceProcess[] = [];
  let cpo: OnboardedPlatform;
  let emsp: OnboardedPlatform;

  before(async () => {
    cut = await startClusterUnderTest('replicas');
    env = serviceEnv(cut.stack, { PROBE_INTERVAL_MS: String(PROBE_INTERVAL_MS), CDR_RELAY_AFTER_SECONDS: '15', DELIVERY_CONCURRENCY_PER_EMSP: String(CONCURRENCY_PER_EMSP) });
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      hubs.push(`http://127.0.0.1:${port}`);
      ingress.push(await startService('ingress', { ...env, HUB_PORT: String(port) }, /ingress listening/, 60_000));
    }
    for (let i = 0; i < 2; i++) {
      projectors.push(await startService('projector', env, /projector running/, 60_000));
      dispatchers.push(await startService('dispatcher', env, /dispatcher running/, 60_000));
      probers.push(await startService('prober', env, /prober running/, 60_000));
    }
    const hubEnv = { ...env, HUB_PORT: new URL(hubs[0] ?? '').port };
    cpo = await onboard(hubs[0] ?? '', hubEnv, 'CPO', [{ role: 'CPO', countryCode: 'NL', partyId: 'STK' }]);
    emsp = await onboard(hubs[1] ?? '', hubEnv, 'eMSP', [{ role: 'EMSP', countryCode: 'NL', partyId: 'TST' }], receivers);
    assert.equal((await hubctl(env, ['routing', 'enable', '--emsp', 'NL/TST', '--cpo', 'NL/STK'])).code, 0);
    for (const id of LOCATIONS) {
      const res = await call(hubs[0] ?? '', 'PUT', `/ocpi/2.2.1/locations/NL/STK/${id}`, { token: cpo.token, body: locationBody(id) });
      assert.equal(res.body.status_code, 1000, res.text);
    }
    await until('the locations projected', async () => (await readModelRows(cut.stack.pool)).locations.length === LOCATIONS.length, 60_000);
  });

  after(async () => {
    keepLogs('replicas', [...ingress, ...projectors, ...dispatchers, ...probers]);
    await Promise.allSettled([...[...ingress, ...projectors, ...dispatchers, ...probers].map((s) => s.stop()), cpo?.partner.close(), emsp?.partner.close()]);
    await cut?.stop();
  });

  const versionProbes = () => emsp.partner.requests.filter((r) => r.method === 'GET' && r.path === '/ocpi/versions').length;
  const activeProber = () => probers.find((p) => p.child.exitCode === null && p.child.signalCode === null && jsonLogs(p).filter((l) => /prober lease (taken|lost)/.test(String(l['message']))).at(-1)?.['message'] === 'prober lease taken: this replica probes partners');
  const kill = async (s: ServiceProcess) => {
    const at = Date.now();
    await s.stop('SIGKILL');
    return at;
  };

  it('keeps exactly-once projection, at-least-once delivery, one prober and one outbox publication while one of each replica is SIGKILLed', async () => {
    await until('one prober holding the lease', () => activeProber(), 20_000);
    const live = [...hubs];
    const probesBefore = versionProbes();
    const loadStart = Date.now();
    const load = startLoad({ hubs: () => live, token: cpo.token, ratePerSecond: 60, durationMs: 120_000, maxInFlight: 400 });
    const t0 = Date.now();
    const faults: FaultWindow[] = [{ fault: 'none (load running)', at: t0 }];
    let proberKilledAt = 0;
    let probesAtProberKill = 0;
    try {
      await sleep(5_000);
      faults.push({ fault: 'SIGKILL ingress 1 (load balancer drops it 1 s later)', at: await kill(ingress[0] as ServiceProcess), kill: true });
      await sleep(1_000);
      live.splice(0, 1);
      await sleep(5_000);
      faults.push({ fault: 'SIGKILL projector 1', at: await kill(projectors[0] as ServiceProcess), kill: true });
      // A registry change while the probers relay the outbox: hubctl publishes it, the probers race it.
      assert.equal((await hubctl(env, ['party', 'register', '--role', 'EMSP', '--country', 'DE', '--party', 'XTR', '--name', 'Extra', '--json'])).code, 0);
      await sleep(5_000);
      faults.push({ fault: 'SIGKILL dispatcher 1', at: await kill(dispatchers[0] as ServiceProcess), kill: true });
      await sleep(6_000);
      const prober = activeProber();
      assert.ok(prober, 'an active prober');
      probesAtProberKill = versionProbes();
      proberKilledAt = await kill(prober);
      faults.push({ fault: `SIGKILL prober ${probers.indexOf(prober) + 1} (the one holding the lease)`, at: proberKilledAt, kill: true });
      await sleep(2_000);
      // The CPO's platform goes away and comes back: the surviving prober records both changes,
      // and their audit events go through the outbox.
      await cpo.partner.goDown();
      await sleep(3_000);
      await cpo.partner.comeUp();
      await sleep(6_000);
    } finally {
      load.stop();
      await load.done;
    }
    const loadSeconds = (Date.now() - loadStart) / 1000;
    const probes = versionProbes() - probesBefore;
    const probesAfterKill = versionProbes() - probesAtProberKill;
    const { pushes } = load;
    await awaitDeliveries(pushes, emsp.partner, 90_000);
    await awaitProjected(cut.stack, cut.stack.pool, 60_000, () => projectors.map((s) => warnings(s)).join('\n'));
    const records = await readTopics(cut.stack, LOADED_TOPICS);
    const { rows, problems } = figures(pushes, records, emsp.partner);
    const resent = pushes.filter((p) => p.resent).length;
    const causes = duplicateCauses(emsp.partner, pushes, dispatchers.flatMap((d) => jsonLogs(d)));
    printFaultTable('every service replicated (test/cluster/replicas.cluster.test.ts, `npm test -- cluster`)', rows, faultRows(pushes, faults), [
      `faults at: ${faults.map((f) => `${f.fault} +${((f.at - t0) / 1000).toFixed(1)} s`).join('; ')}`,
      duplicateDetail(emsp.partner, t0),
      `duplicate deliveries by cause: ${causes.afterFailedAttempt} retried after a failed (timed-out) attempt, ${causes.pushedTwice} pushed twice by the CPO, ${causes.otherwise} other (in flight at the killed dispatcher)`,
      `load: ${pushes.length} pushes at 60/s over two ingress replicas on three brokers of Kafka ${cut.cluster.nodes[0]?.version}, ${resent} resent to the other replica after no answer; probes of the eMSP: ${probes} in ${loadSeconds.toFixed(0)} s at a ${PROBE_INTERVAL_MS} ms interval with two probers (${probesAfterKill} after the active prober was killed)`,
    ]);

    const others = pushes.filter((p) => !acknowledged(p) && !retryable(p));
    assert.deepEqual(others.map((p) => `${p.kind} ${p.id}: HTTP ${p.httpStatus} OCPI ${p.ocpiStatus ?? '-'} ${p.error ?? ''}`), [], 'every answer is 1000 or a retryable 503');
    assert.deepEqual(problems, [], 'every acknowledged push on Kafka as sent and at the eMSP');
    // At-least-once: a delivery is sent again only after an attempt that failed (the eMSP may have
    // recorded it), when the CPO pushed it twice, or when its dispatcher died with it in flight (at
    // most DELIVERY_CONCURRENCY_PER_EMSP of the killed replica).
    assert.ok(causes.otherwise <= CONCURRENCY_PER_EMSP, `duplicates with no failed attempt and no second push: ${causes.otherwise}`);
    // One probe per partner per interval across two probers (both probing would double it); the
    // standby took over after the active one died.
    const intervals = (loadSeconds * 1000) / PROBE_INTERVAL_MS;
    assert.ok(probes <= intervals + 3, `${probes} probes of the eMSP in ${intervals.toFixed(0)} intervals`);
    assert.ok(probesAfterKill >= 3, `${probesAfterKill} probes after the active prober was killed`);

    // Registry outbox published once: every row published, each audit event on the topic once.
    await until('the registry outbox published', async () => Number((await cut.stack.pool.query<{ n: string }>('select count(*) as n from registry_outbox where published_at is null')).rows[0]?.n) === 0, 30_000);
    const outbox = await cut.stack.pool.query<{ id: string }>(`select event->>'id' as id from registry_outbox`);
    const registry = await readTopics(cut.stack, [topics.registry]);
    const onTopic = registry.map((r) => r.ceId ?? '');
    assert.equal(new Set(onTopic).size, onTopic.length, 'no registry event published twice');
    assert.deepEqual([...onTopic].sort(), outbox.rows.map((r) => r.id).sort(), 'the registry topic holds the outbox, once each');
    const health = registry.filter((r) => r.value['platform_id'] === cpo.platformId).map((r) => r.value['status']);
    assert.ok(health.includes('OFFLINE') && health.at(-1) === 'CONNECTED', `the surviving prober recorded the CPO going away and back: ${health.join(', ')}`);

    const replay = await replayReadModel(cut.stack, env);
    const liveRows = await readModelRows(cut.stack.pool);
    assert.equal(liveRows.locations.length, LOCATIONS.length);
    assert.deepEqual(liveRows, replay, 'the read model equals a clean replay of the topic');
  });
});
