// hub_event_appends_total (the append-errors alert): every append to the event log
// counts once by logical topic and outcome, an acknowledged one as ok, a failed or timed-out one as
// error; hub_event_append_duration_seconds observes how long each acknowledged one waited. Real Kafka:
// the failing append is one Kafka does not acknowledge within its time limit (1 ms).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createEventLog } from '@hub/event-log';
import { newEvent, topics } from '@hub/events';
import { createAppendMetrics, createLogger, createMetricsRegistry } from '@hub/observability';
import { givenTestStack } from '@hub/testing';

describe('event log appends are counted by topic and outcome', () => {
  const given = givenTestStack('event_appends');

  it('an acknowledged append counts as ok, a timed-out one as error, and both series exist from the first append', async () => {
    const { stack } = given;
    const registry = createMetricsRegistry('test');
    const onAppendSettled = createAppendMetrics(registry);
    const logOf = (appendTimeoutMs: number) =>
      createEventLog({ brokers: stack.brokers, clientId: 'event-appends-test', topicPrefix: stack.topicPrefix, logger: createLogger({ service: 'test', level: 'error' }), appendTimeoutMs, onAppendSettled });
    const log = await logOf(10_000);
    const hasty = await logOf(1);
    const event = (id: string) => newEvent({ type: 'ocpi.locations.location-put.v1', source: 'test', subject: `NL/STK/${id}`, key: `NL/STK/${id}`, data: { id } });
    try {
      await log.append(topics.locations, [event('A'), event('B')]);
      const afterOk = await registry.getSingleMetricAsString('hub_event_appends_total');
      assert.match(afterOk, new RegExp(`hub_event_appends_total\\{topic="${topics.locations.replace(/\./g, '\\.')}",outcome="ok",service="test"\\} 1(\\n|$)`));
      assert.match(afterOk, /outcome="error",service="test"\} 0(\n|$)/);
      // The acknowledged append's wait is observed once, under its topic.
      const durations = await registry.getSingleMetricAsString('hub_event_append_duration_seconds');
      assert.match(durations, new RegExp(`hub_event_append_duration_seconds_count\\{[^}]*topic="${topics.locations.replace(/\./g, '\\.')}"[^}]*\\} 1(\\n|$)`));
      await assert.rejects(hasty.append(topics.tariffs, [event('C')]), /did not acknowledge/);
      const afterError = await registry.getSingleMetricAsString('hub_event_appends_total');
      assert.match(afterError, new RegExp(`hub_event_appends_total\\{topic="${topics.tariffs.replace(/\./g, '\\.')}",outcome="error",service="test"\\} 1(\\n|$)`));
      // A failed append is not a latency: it waited for its time limit.
      assert.doesNotMatch(await registry.getSingleMetricAsString('hub_event_append_duration_seconds'), /topic="[^"]*tariffs[^"]*"/);
      // The timed-out send still reaches Kafka: closing before it lands would leave it retrying.
      for (let i = 0; i < 200 && [...(await stack.eventLog.latestOffsets(topics.tariffs)).values()].every((o) => o === 0n); i++) await new Promise((r) => setTimeout(r, 50));
    } finally {
      await Promise.all([log.close(), hasty.close()]);
    }
  });
});
