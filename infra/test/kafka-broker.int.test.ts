// The local stack's broker is a real Apache Kafka: a produce/consume round trip through the event log with
// acks=all, and the broker answers the Kafka protocol's metadata and API-versions requests as
// Kafka in KRaft mode does; the process runs the release KAFKA_VERSION names (4.x by default).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { TopicRecord } from '@hub/event-log';
import { newEvent } from '@hub/events';
import { createTestStack, type TestStack } from '@hub/testing';
import { kafkaVersion } from '../stack/kafka-dist.ts';

describe('the test stack broker', () => {
  let stack: TestStack;
  before(async () => {
    stack = await createTestStack('kafka');
  });
  after(async () => {
    await stack?.cleanup();
  });

  it(`is a Kafka ${kafkaVersion()} broker process from the Maven Central jars`, () => {
    const pid = process.env['TEST_BROKER_PID'];
    // Only when npm test started the broker itself; with KAFKA_BROKERS it is someone else's cluster.
    if (!pid) return;
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    assert.ok(cmdline.includes('kafka.Kafka'), cmdline.join(' '));
    const version = kafkaVersion();
    assert.ok(cmdline.some((a) => a.endsWith(`.local/kafka/${version}/libs/*`)), 'classpath is the jar cache of that release');
    // The JVM keeps the jars it loaded classes from open.
    const open = readdirSync(`/proc/${pid}/fd`).map((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        return '';
      }
    });
    assert.ok(open.some((f) => f.endsWith(`/kafka_2.13-${version}.jar`)), `kafka_2.13-${version}.jar is loaded`);
    // Its own log goes to server.log through the logging of that line (log4j2 from 4.0, reload4j before).
    const logging = version.startsWith('3.') ? '-Dlog4j.configuration=file:' : '-Dlog4j2.configurationFile=file:';
    assert.ok(cmdline.some((a) => a.startsWith(logging)), `${logging} is set`);
    const home = cmdline.find((a) => a.startsWith(logging))!.slice(logging.length).replace(/\/[^/]+$/, '');
    assert.match(readFileSync(`${home}/logs/server.log`, 'utf8'), /INFO .*\[KafkaRaftServer nodeId=\d+\] Kafka Server started/);
  });

  it('describes a KRaft cluster with a controller', async () => {
    const admin = stack.eventLog.topicAdmin();
    const cluster = await admin.describeCluster();
    assert.ok(cluster.brokers.length >= 1);
    assert.ok(cluster.controller !== null && cluster.controller >= 0);
    assert.match(cluster.clusterId, /^[A-Za-z0-9_-]{22}$/);
    await admin.close();
  });

  it('round-trips events with acks=all, keys, headers and per-key order', async () => {
    const events = Array.from({ length: 50 }, (_, i) =>
      newEvent({ type: 'test.roundtrip.v1', source: 'test', subject: `k${i % 5}`, key: `k${i % 5}`, data: { seq: i }, correlationId: `c${i}` }),
    );
    await stack.eventLog.append('ocpi.sessions.v1', events);
    const eventsOf = (rs: readonly TopicRecord[]) => rs.flatMap((r) => (r.event ? [r.event] : []));
    const read = await stack.eventLog.readTopics(['ocpi.sessions.v1'], { until: (rs) => eventsOf(rs).length === 50, timeoutMs: 30_000 });
    const received: Array<{ key: string; seq: number; correlationId: string | undefined; type: string }> = eventsOf(read.records).map((event) => {
      const data = event.data as { seq: number };
      return { key: event.key, seq: data.seq, correlationId: event.correlationId, type: event.type };
    });
    if (!read.complete) throw new Error(`only ${received.length} of 50 events consumed`);
    assert.deepEqual(new Set(received.map((r) => r.type)), new Set(['test.roundtrip.v1']));
    for (const r of received) assert.equal(r.correlationId, `c${r.seq}`);
    // Within one key the order of appends is kept.
    for (let k = 0; k < 5; k++) {
      const seqs = received.filter((r) => r.key === `k${k}`).map((r) => r.seq);
      assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
      assert.equal(seqs.length, 10);
    }
  });

  it('creates topics idempotently from infra/topics.json', async () => {
    const { ensureTopics } = await import('@hub/event-log');
    const { topicDefinitions } = await import('@hub/testing');
    const admin = stack.eventLog.topicAdmin();
    const created = await ensureTopics(admin, topicDefinitions(), stack.topicPrefix);
    assert.deepEqual(created, [], 'a second run creates nothing');
    const meta = await admin.describeTopics([stack.eventLog.physical('ocpi.cdrs.v1')]);
    assert.equal(meta.topics[0]?.partitions.length, 12);
    await admin.close();
  });

  it('never adds partitions to an existing topic (it would reorder each key\'s events) and says so', async () => {
    const { ensureTopics } = await import('@hub/event-log');
    const admin = stack.eventLog.topicAdmin();
    const topic = { name: 'keyed.v1', partitions: 2, replicationFactor: 1, config: {} };
    assert.deepEqual(await ensureTopics(admin, [topic], stack.topicPrefix), [`${stack.topicPrefix}.keyed.v1`]);
    const warnings: string[] = [];
    assert.deepEqual(await ensureTopics(admin, [{ ...topic, partitions: 6 }], stack.topicPrefix, (n) => warnings.push(`${n.kind}: ${n.message}`)), []);
    const meta = await admin.describeTopics([`${stack.topicPrefix}.keyed.v1`]);
    assert.equal(meta.topics[0]?.partitions.length, 2);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /^partitions-kept: .*has 2 partitions, its definition 6: left as is/);
    await admin.close();
  });
});
