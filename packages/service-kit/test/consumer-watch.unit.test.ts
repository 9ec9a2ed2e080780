// The consumer watch: a batch that fails for a reason not the record's makes its
// partition wait a growing backoff (never throws into the event log); a partition on one
// offset beyond the bound is a `down` health problem and shows in hub_consumer_stuck_seconds, even
// when the cause is unknown (a batch that never finishes); quarantined records make health degraded.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { createLogger, createMetricsRegistry } from '@hub/observability';
import type { QuarantineStore } from '@hub/core';
import { consumerWatch } from '../src/consumer-watch.ts';
import { RetryLater } from '../src/poison-proof.ts';

function givenWatch(openCounts: Array<{ consumerGroup: string; topic: string; count: number }> = []) {
  const clock = { t: 1_000_000 };
  const metrics = createMetricsRegistry('test');
  const logs: string[] = [];
  const stream = new PassThrough();
  stream.on('data', (d: Buffer) => logs.push(d.toString()));
  const quarantine = { openCounts: () => Promise.resolve(openCounts) } as unknown as QuarantineStore;
  const watch = consumerWatch({ group: 'projector', metrics, logger: createLogger({ service: 'test', stream }), quarantine, stuckAfterMs: 60_000, backoff: { firstMs: 1, maxMs: 4 }, now: () => clock.t });
  return { clock, metrics, logs, watch };
}
const batch = { topic: 'hub.locations', partition: 3, firstOffset: '41' };
const postgresDown = () => Promise.reject(new RetryLater('dependency', Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })));

describe('consumerWatch', () => {
  it('a failing batch does not throw and asks its partition to wait a growing backoff, up to the cap', async () => {
    const { watch } = givenWatch();
    assert.deepEqual(await watch.guard(batch, postgresDown), { retryAfterMs: 1 });
    assert.deepEqual(await watch.guard(batch, postgresDown), { retryAfterMs: 2 });
    assert.deepEqual(await watch.guard(batch, postgresDown), { retryAfterMs: 4 });
    assert.deepEqual(await watch.guard(batch, postgresDown), { retryAfterMs: 4 });
    assert.equal(await watch.guard(batch, () => Promise.resolve()), undefined);
    watch.stop();
  });

  it('positions of another topic are down with the fix and set hub_consumer_positions_mismatch until they match', async () => {
    const { watch, metrics, logs } = givenWatch();
    watch.positionsMismatch([{ topic: 'hub.locations', reason: 'the position 9 of partition 0 is beyond its end 3' }]);
    const problems = await watch.problems();
    assert.equal(problems[0]?.severity, 'down');
    assert.match(problems[0]?.reason ?? '', /beyond its end 3; run hubctl positions reset --consumer projector/);
    assert.match(await metrics.metrics(), /hub_consumer_positions_mismatch\{group="projector",topic="hub.locations",service="test"\} 1/);
    await new Promise((r) => setImmediate(r));
    assert.equal(logs.filter((l) => l.includes('"level":"error"') && l.includes('hubctl positions reset')).length, 1);
    watch.positionsMismatch([]);
    assert.deepEqual(await watch.problems(), []);
    assert.match(await metrics.metrics(), /hub_consumer_positions_mismatch\{group="projector",topic="hub.locations",service="test"\} 0/);
    watch.stop();
  });

  it('a partition failing on one offset beyond the bound is down, with the reason, and in hub_consumer_stuck_seconds', async () => {
    const { watch, clock, metrics } = givenWatch();
    await watch.guard(batch, postgresDown);
    clock.t += 30_000;
    await watch.guard(batch, postgresDown);
    assert.deepEqual(await watch.problems(), [], 'within the bound');
    assert.match(await metrics.metrics(), /hub_consumer_stuck_seconds\{group="projector",topic="hub.locations",partition="3",service="test"\} 30/);
    clock.t += 30_001;
    await watch.guard(batch, postgresDown);
    const problems = await watch.problems();
    assert.equal(problems.length, 1);
    assert.equal(problems[0]?.severity, 'down');
    assert.match(problems[0]?.reason ?? '', /hub\.locations partition 3 at offset 41 for 60 s: Error 57P01: terminating connection/);
    // Moving on clears it.
    await watch.guard(batch, () => Promise.resolve());
    assert.deepEqual(await watch.problems(), []);
    assert.doesNotMatch(await metrics.metrics(), /hub_consumer_stuck_seconds\{/);
    watch.stop();
  });

  it('a partition another member took over in a rebalance is no longer stuck here', async () => {
    const { watch, clock } = givenWatch();
    await watch.guard(batch, postgresDown);
    clock.t += 60_001;
    assert.equal((await watch.problems()).length, 1);
    watch.assigned({ 'hub.locations': [3] });
    assert.equal((await watch.problems()).length, 1, 'still assigned');
    watch.assigned({ 'hub.locations': [0, 1, 2], 'hub.tariffs': [3] });
    assert.deepEqual(await watch.problems(), []);
    watch.stop();
  });

  it('a batch that never finishes is stuck too (cause unknown)', async () => {
    const { watch, clock } = givenWatch();
    void watch.guard(batch, () => new Promise<void>(() => undefined));
    clock.t += 60_001;
    const problems = await watch.problems();
    assert.equal(problems[0]?.severity, 'down');
    assert.match(problems[0]?.reason ?? '', /the batch has not finished/);
    watch.stop();
  });

  it('quarantined records of its own group make health degraded and fill hub_consumer_quarantined', async () => {
    const { watch, metrics } = givenWatch([
      { consumerGroup: 'projector', topic: 'hub.locations', count: 2 },
      { consumerGroup: 'dispatcher', topic: 'hub.sessions', count: 5 },
    ]);
    watch.quarantined('hub.locations', 2);
    assert.deepEqual(await watch.problems(), [{ severity: 'degraded', reason: '2 record(s) of hub.locations quarantined by consumer projector: hubctl quarantine list --group projector' }]);
    const text = await metrics.metrics();
    assert.match(text, /hub_consumer_quarantined\{group="projector",topic="hub.locations",service="test"\} 2/);
    assert.match(text, /hub_consumer_quarantined_total\{group="projector",topic="hub.locations",service="test"\} 2/);
    assert.doesNotMatch(text, /dispatcher/);
    watch.stop();
  });
  it('two consumer groups of one service share the metrics registry, each reporting its own partitions', async () => {
    const metrics = createMetricsRegistry('test');
    const clock = { t: 1_000_000 };
    const quarantine = { openCounts: () => Promise.resolve([{ consumerGroup: 'dispatcher.registry', topic: 'hub.registry.v1', count: 2 }]) } as unknown as QuarantineStore;
    const logger = createLogger({ service: 'test', stream: new PassThrough() });
    const watch = (group: string) => consumerWatch({ group, metrics, logger, quarantine, stuckAfterMs: 60_000, backoff: { firstMs: 1, maxMs: 4 }, now: () => clock.t });
    const deliveries = watch('dispatcher');
    const registry = watch('dispatcher.registry');
    await deliveries.guard({ topic: 'ocpi.sessions.v1', partition: 1, firstOffset: '5' }, postgresDown);
    await registry.guard({ topic: 'hub.registry.v1', partition: 0, firstOffset: '7' }, postgresDown);
    clock.t += 2_000;
    const text = await metrics.metrics();
    assert.match(text, /hub_consumer_stuck_seconds\{group="dispatcher",topic="ocpi.sessions.v1",partition="1"[^}]*\} 2/);
    assert.match(text, /hub_consumer_stuck_seconds\{group="dispatcher.registry",topic="hub.registry.v1",partition="0"[^}]*\} 2/);
    assert.match(text, /hub_consumer_quarantined\{group="dispatcher.registry",topic="hub.registry.v1"[^}]*\} 2/);
    assert.equal((await deliveries.problems()).some((p) => p.reason.includes('quarantined')), false, 'another group\'s quarantine is not this one\'s problem');
    registry.stop();
    clock.t += 1_000;
    assert.doesNotMatch(await metrics.metrics(), /group="dispatcher.registry",topic="hub.registry.v1",partition/);
    deliveries.stop();
  });
});
