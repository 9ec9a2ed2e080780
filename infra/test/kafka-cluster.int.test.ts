// KAFKA_NODES=3: a three-node KRaft quorum on loopback gives the hub's topics the
// replication factor and min.insync.replicas infra/topics.json defines, and an acks=all append is
// acknowledged by the in-sync replicas and read back. startCluster is what `npm start` runs.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createEventLog, ensureTopics, readTopicDefinitions, type KafkaEventLog, type TopicAdmin, type TopicRecord } from '@hub/event-log';
import { newEvent } from '@hub/events';
import { createLogger } from '@hub/observability';
import { startCluster, type RunningCluster } from '../stack/kafka.ts';
import { local, topicsFile } from '../stack/paths.ts';
import { freePort, pidAlive } from '../stack/proc.ts';
import { whileRetriable } from '@hub/testing';

describe('a three-node local Kafka cluster', () => {
  const home = join(local, 'kafka', `cluster-test-${process.pid}`);
  const prefix = 'cluster3';
  let cluster: RunningCluster | undefined;
  let log: KafkaEventLog | undefined;
  /**
   * The node ids in the metadata once all three are there together (bounded wait). On two shared cores
   * a node can miss a heartbeat while three JVMs start, or later under load, and be fenced for a moment.
   */
  const everyNode = async (admin: TopicAdmin): Promise<number[]> => {
    let ids: number[] = [];
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
      ids = (await admin.describeCluster()).brokers.map((b) => b.nodeId).sort();
      if (ids.length === 3) break;
    }
    return ids;
  };
  before(async () => {
    rmSync(home, { recursive: true, force: true });
    const ports = [];
    for (let i = 0; i < 3; i++) ports.push({ port: await freePort(), controllerPort: await freePort() });
    cluster = await startCluster({ nodes: 3, home, ports, heapMb: 320 });
    log = await createEventLog({ brokers: cluster.brokers.split(','), clientId: 'cluster-test', topicPrefix: prefix, logger: createLogger({ service: 'test', level: 'error' }) });
  });
  after(async () => {
    await log?.close();
    const pids = cluster?.nodes.map((n) => n.pid) ?? [];
    await cluster?.stop();
    assert.ok(pids.every((pid) => !pidAlive(pid)), 'every node stopped');
    rmSync(home, { recursive: true, force: true });
  });

  it('runs three broker processes, each a voter of one quorum', async () => {
    assert.ok(cluster && log);
    assert.equal(cluster.nodes.length, 3);
    assert.equal(new Set(cluster.nodes.map((n) => n.pid)).size, 3);
    const admin = log.topicAdmin();
    assert.deepEqual(await everyNode(admin), [1, 2, 3]);
  });

  it('creates the hub topics with their defined replication factor and min.insync.replicas', async () => {
    assert.ok(log);
    const definitions = readTopicDefinitions(topicsFile);
    const admin = log.topicAdmin();
    // A node fenced for a moment since (see everyNode) would make the topics clamp to two replicas.
    assert.deepEqual(await everyNode(admin), [1, 2, 3]);
    const notices: string[] = [];
    await ensureTopics(admin, definitions, prefix, (n) => notices.push(n.message));
    assert.deepEqual(notices, [], 'nothing clamped on three brokers');
    const names = definitions.map((d) => log!.physical(d.name));
    const { topics } = await whileRetriable(() => admin.describeTopics(names));
    for (const d of definitions) {
      const t = topics.find((x) => x.name === log!.physical(d.name));
      assert.ok(t, d.name);
      assert.equal(t.partitions.length, d.partitions, `${d.name} partitions`);
      for (const p of t.partitions) assert.equal(p.replicas.length, d.replicationFactor, `${d.name}/${p.partitionId} replicas`);
    }
    const configs = await whileRetriable(() => admin.describeTopicConfigs(names, ['min.insync.replicas']));
    for (const r of configs.resources) {
      const expected = definitions.find((d) => log!.physical(d.name) === r.resourceName)?.config['min.insync.replicas'];
      assert.equal(r.configEntries.find((c) => c.configName === 'min.insync.replicas')?.configValue, expected ?? '1', r.resourceName);
    }
  });

  it('acknowledges an acks=all append on a replicated topic and reads it back', async () => {
    assert.ok(log);
    const topic = readTopicDefinitions(topicsFile).find((d) => d.replicationFactor === 3)?.name ?? 'ocpi.locations.v1';
    const events = [1, 2, 3].map((n) => newEvent({ type: 't', source: 'test', subject: `s${n}`, key: `k${n}`, data: { n } }));
    await log.append(topic, events);
    // Appends are at least once: a send retried after "not the leader" (a replicated topic's leaders
    // still settling) may have landed twice, and consumers drop duplicates by ce_id (schemas/events/README.md).
    const byId = (rs: readonly TopicRecord[]) => new Map(rs.flatMap((r) => (r.event ? [[r.event.id, r.event.data] as const] : [])));
    const read = await log.readTopics([topic], { until: (rs) => byId(rs).size === events.length, timeoutMs: 120_000 });
    const seen = byId(read.records);
    assert.deepEqual([...seen.values()].map((d) => (d as { n: number }).n).sort(), [1, 2, 3]);
    assert.deepEqual([...seen.keys()].sort(), events.map((e) => e.id).sort());
  });
});
