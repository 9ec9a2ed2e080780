// Broker loss under load. Three KRaft nodes (every topic with 3 replicas and
// min.insync.replicas 2), the ingress, projector, dispatcher and prober as real processes, a CPO
// pushing session PUTs, CDR POSTs and location PATCHes at a steady rate, an eMSP receiving. The node
// leading most of the loaded partitions is SIGKILLed and started again, then the active controller.
// Every push answered 1000 must be on Kafka as sent, every acknowledged session and CDR at the eMSP,
// the read model equal to a clean replay, and every other answer a retryable 503. The fault table is
// printed for the issue note.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, jsonLogs, startService, type ServiceProcess } from '@hub/testing';
import { freePort, hubctl, onboard, until, type OnboardedPlatform } from '../helpers.ts';
import { keepLogs, LOADED_TOPICS, serviceEnv, startClusterUnderTest, type ClusterUnderTest } from './cluster-fixture.ts';
import { acknowledged, LOCATIONS, locationBody, retryable, startLoad } from './load.ts';
import { awaitDeliveries, awaitProjected, cdrCopies, cdrCopiesLine, duplicateCauses, duplicateDetail, faultRows, figures, printFaultTable, readModelRows, readTopics, replayReadModel, warnings, type FaultWindow } from './verify.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const receivers = [
  { identifier: 'credentials', role: 'SENDER' as const },
  { identifier: 'sessions', role: 'RECEIVER' as const },
  { identifier: 'cdrs', role: 'RECEIVER' as const },
];

describe('broker loss under load (three brokers)', () => {
  let cut: ClusterUnderTest;
  let env: Record<string, string>;
  let hub: string;
  const services: ServiceProcess[] = [];
  let cpo: OnboardedPlatform;
  let emsp: OnboardedPlatform;

  before(async () => {
    // The settle window is the one the brokers need (docs/decisions/0003-each-cdr-once.md, The settle
    // window): above APPEND_TIMEOUT_MS (the ingress's 5 s here, the prober's default 10 s) + 1.5 x
    // replica.lag.time.max.ms. These brokers drop a dead follower from the ISR after 10 s (Kafka's
    // default before 2.5; 30 s since), so 30 s is enough: 10 + 15 = 25. The services check that at
    // start (asserted below), as they do in production with the default 60 s and Kafka's 30 s.
    cut = await startClusterUnderTest('broker_loss', { brokerSettings: { 'replica.lag.time.max.ms': '10000' } });
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = serviceEnv(cut.stack, { HUB_PORT: String(port), PROBE_INTERVAL_MS: '5000', CDR_RELAY_AFTER_SECONDS: '30' });
    services.push(await startService('ingress', env, /ingress listening/, 60_000));
    services.push(await startService('projector', env, /projector running/, 60_000));
    services.push(await startService('dispatcher', env, /dispatcher running/, 60_000));
    services.push(await startService('prober', env, /prober running/, 60_000));
    cpo = await onboard(hub, env, 'CPO', [{ role: 'CPO', countryCode: 'NL', partyId: 'STK' }]);
    emsp = await onboard(hub, env, 'eMSP', [{ role: 'EMSP', countryCode: 'NL', partyId: 'TST' }], receivers);
    assert.equal((await hubctl(env, ['routing', 'enable', '--emsp', 'NL/TST', '--cpo', 'NL/STK'])).code, 0);
    for (const id of LOCATIONS) {
      const res = await call(hub, 'PUT', `/ocpi/2.2.1/locations/NL/STK/${id}`, { token: cpo.token, body: locationBody(id) });
      assert.equal(res.body.status_code, 1000, res.text);
    }
    await until('the locations projected', async () => (await readModelRows(cut.stack.pool)).locations.length === LOCATIONS.length, 60_000);
  });

  after(async () => {
    keepLogs('broker_loss', services);
    await Promise.allSettled([...services.map((s) => s.stop()), cpo?.partner.close(), emsp?.partner.close()]);
    await cut?.stop();
  });

  it('loses no acknowledged push when a partition leader and then the active controller are SIGKILLed', async () => {
    const load = startLoad({ hubs: () => [hub], token: cpo.token, ratePerSecond: 60, durationMs: 120_000, maxInFlight: 400 });
    const t0 = Date.now();
    const faults: FaultWindow[] = [{ fault: 'none (load running)', at: t0 }];
    try {
      await sleep(5_000);
      const busiest = await cut.busiestLeader(LOADED_TOPICS);
      faults.push({ fault: `SIGKILL node ${busiest.nodeId} (leader of ${busiest.partitions} of the 30 loaded partitions)`, at: await cut.kill(busiest.nodeId), kill: true });
      await sleep(6_000);
      faults.push({ fault: `restart node ${busiest.nodeId}`, at: Date.now() });
      await cut.restart(busiest.nodeId);
      faults.push({ fault: `node ${busiest.nodeId} listening again`, at: Date.now() });
      await sleep(4_000);
      const controller = cut.activeController();
      faults.push({ fault: `SIGKILL node ${controller} (active controller${controller === busiest.nodeId ? ', the restarted node' : ''})`, at: await cut.kill(controller), kill: true });
      await sleep(6_000);
      faults.push({ fault: `restart node ${controller}`, at: Date.now() });
      await cut.restart(controller);
      faults.push({ fault: `node ${controller} listening again`, at: Date.now() });
      await sleep(4_000);
    } finally {
      load.stop();
      await load.done;
    }
    const { pushes } = load;
    await awaitDeliveries(pushes, emsp.partner, 60_000);
    await awaitProjected(cut.stack, cut.stack.pool, 60_000, () => services.filter((s) => s.name === 'projector').map((s) => warnings(s)).join('\n'));
    // The CDRs refused 503 whose receipt is pending reach the topic by the prober's relay (after the
    // 30 s settle window): read the topic once it has taken them all, so they are counted per ce_id too.
    const pendingCdrs = async () => Number((await cut.stack.pool.query<{ n: string }>("select count(*) as n from cdrs where state = 'pending'")).rows[0]?.n ?? 0);
    await until('every received CDR on Kafka (the relay)', async () => (await pendingCdrs()) === 0, 120_000).catch(() => undefined);
    const stillPending = await pendingCdrs();
    const records = await readTopics(cut.stack, LOADED_TOPICS);
    const { rows, problems } = figures(pushes, records, emsp.partner);
    const copies = cdrCopies(records);
    const causes = duplicateCauses(emsp.partner, pushes, services.filter((s) => s.name === 'dispatcher').flatMap((s) => jsonLogs(s)));
    printFaultTable('broker loss under load (test/cluster/broker-loss.cluster.test.ts, `npm test -- cluster`)', rows, faultRows(pushes, faults), [
      `faults at: ${faults.map((f) => `${f.fault} +${((f.at - t0) / 1000).toFixed(1)} s`).join('; ')}`,
      duplicateDetail(emsp.partner, t0),
      `${cdrCopiesLine(copies)}; CDR receipts still pending when the topic was read: ${stillPending}`,
      ...(copies.whereRepeated.length > 0 ? [`copies (partition@offset CreateTime; load began ${new Date(t0).toISOString().slice(11, 23)}): ${copies.whereRepeated.join('; ')}`] : []),
      `duplicate deliveries by cause: ${causes.afterFailedAttempt} retried after a failed (timed-out) attempt, ${causes.pushedTwice} pushed twice, ${causes.otherwise} other (reported, not asserted: at least once)`,
      `load: ${pushes.length} pushes at 60/s over ${((Math.max(...pushes.map((p) => p.sentAt)) - Math.min(...pushes.map((p) => p.sentAt))) / 1000).toFixed(0)} s, ${load.skipped()} not sent (400 unanswered), 3 brokers of Kafka ${cut.cluster.nodes[0]?.version}, RF 3, min.insync.replicas 2`,
    ]);

    const others = pushes.filter((p) => !acknowledged(p) && !retryable(p));
    assert.deepEqual(others.map((p) => `${p.kind} ${p.id}: HTTP ${p.httpStatus} OCPI ${p.ocpiStatus ?? '-'} ${p.error ?? ''}`), [], 'every answer is 1000 or a retryable 503');
    assert.deepEqual(problems, [], 'every acknowledged push on Kafka as sent and at the eMSP');
    assert.ok(rows.every((r) => r.lost === 0));
    // Each CDR once in the stream (docs/decisions/0003-each-cdr-once.md): acknowledged or relayed, one
    // record per ce_id, so consumers that bill from the topic need no dedupe store.
    assert.equal(copies.twice + copies.more, 0, cdrCopiesLine(copies));
    assert.equal(stillPending, 0, 'every received CDR relayed');
    assert.deepEqual(services.flatMap((s) => s.logs.filter((l) => l.includes('CDR_RELAY_AFTER_SECONDS='))), [], 'the settle window is long enough for these brokers (checked at start)');
    assert.equal(copies.cdrs, rows.find((r) => r.kind === 'cdr')?.sent, 'every CDR the load posted is in the topic (acknowledged, or received and relayed)');
    // Availability comes back: once every node listens again the hub accepts (nearly) every push. How
    // many pushes the fault windows refuse depends on the machine's speed, so it is reported above,
    // not asserted.
    const settledAt = (faults.at(-1)?.at ?? t0) + 2_000;
    const afterRecovery = pushes.filter((p) => p.sentAt >= settledAt);
    assert.ok(afterRecovery.length > 0, 'pushes were sent after the cluster recovered');
    assert.ok(afterRecovery.filter(acknowledged).length >= afterRecovery.length * 0.9, `the hub accepts again after recovery: ${afterRecovery.filter(acknowledged).length} of ${afterRecovery.length}`);
    const replay = await replayReadModel(cut.stack, env);
    const live = await readModelRows(cut.stack.pool);
    assert.equal(live.locations.length, LOCATIONS.length);
    assert.deepEqual(live, replay, 'the read model equals a clean replay of the topic');
  });
});
