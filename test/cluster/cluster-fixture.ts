// A three-broker KRaft quorum on loopback for one cluster test file, with a test stack (its own
// database and topic prefix) on it, and what a fault test asks of it: who leads which partitions, who
// is the active controller, SIGKILL a node and start it again.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TopicAdmin } from '@hub/event-log';
import { topics } from '@hub/events';
import { createTestStack, topicDefinitions, whileRetriable, type ServiceProcess, type TestStack } from '@hub/testing';
import { startCluster, type RunningCluster } from '../../infra/stack/kafka.ts';
import { local } from '../../infra/stack/paths.ts';
import { freePort } from '../helpers.ts';

export interface ClusterUnderTest {
  readonly cluster: RunningCluster;
  readonly stack: TestStack;
  /** Node ids (1..3) whose process this test killed and has not restarted yet. */
  readonly down: Set<number>;
  kill(nodeId: number): Promise<number>;
  restart(nodeId: number): Promise<void>;
  /** The node that leads most partitions of these topics (the busiest leader under a mixed load). */
  busiestLeader(logicalTopics: readonly string[]): Promise<{ nodeId: number; partitions: number }>;
  /** The active KRaft controller: the leader of the newest epoch in the nodes' quorum-state files. */
  activeController(): number;
  stop(): Promise<void>;
}

export async function startClusterUnderTest(label: string, options: { brokerSettings?: Readonly<Record<string, string>> } = {}): Promise<ClusterUnderTest> {
  const home = join(local, 'kafka', `cluster-${label}-${process.pid}`);
  rmSync(home, { recursive: true, force: true });
  const ports = [];
  for (let i = 0; i < 3; i++) ports.push({ port: await freePort(), controllerPort: await freePort() });
  const cluster = await startCluster({ nodes: 3, home, ports, heapMb: 384, ...(options.brokerSettings ? { settings: options.brokerSettings } : {}) });
  let stack: TestStack | undefined;
  const down = new Set<number>();
  let admin: TopicAdmin | undefined;
  try {
    const created = await createTestStack(label, { brokers: cluster.brokers.split(','), fullReplication: true });
    stack = created;
    admin = created.eventLog.topicAdmin();
    // The topics must have their real replication (3, min.insync.replicas 2): that is what is under test.
    const physical = topicDefinitions().map((d) => created.eventLog.physical(d.name));
    // A new topic reaches the three nodes' metadata one after the other (UNKNOWN_TOPIC_OR_PARTITION, retriable).
    const metadataAdmin = admin;
    const meta = await whileRetriable(() => metadataAdmin.describeTopics(physical), 30_000);
    for (const t of meta.topics) for (const p of t.partitions) assert.equal(p.replicas.length, 3, `${t.name}/${p.partitionId} has 3 replicas`);
  } catch (e) {
    // Nothing of a failed start is left running (the test's after hook has no cluster to stop).
    await admin?.close().catch(() => undefined);
    await stack?.cleanup().catch(() => undefined);
    await cluster.stop();
    rmSync(home, { recursive: true, force: true });
    throw e;
  }
  const slice = stack;
  const clusterAdmin = admin;
  return {
    cluster,
    stack: slice,
    down,
    async kill(nodeId) {
      const node = cluster.nodes[nodeId - 1];
      assert.ok(node, `node ${nodeId}`);
      const exited = new Promise((r) => node.child.once('exit', r));
      process.kill(node.pid, 'SIGKILL');
      await exited;
      down.add(nodeId);
      return Date.now();
    },
    async restart(nodeId) {
      await cluster.restartNode(nodeId);
      down.delete(nodeId);
    },
    async busiestLeader(logicalTopics) {
      const counts = new Map<number, number>();
      const { topics: described } = await clusterAdmin.describeTopics(logicalTopics.map((t) => slice.eventLog.physical(t)));
      for (const t of described) for (const p of t.partitions) if (!down.has(p.leader)) counts.set(p.leader, (counts.get(p.leader) ?? 0) + 1);
      const [nodeId, partitions] = [...counts].sort((a, b) => b[1] - a[1])[0] ?? [0, 0];
      assert.ok(nodeId > 0, 'a partition leader');
      return { nodeId, partitions };
    },
    activeController() {
      let best = { leaderId: -1, leaderEpoch: -1 };
      for (let i = 1; i <= 3; i++) {
        if (down.has(i)) continue;
        const file = join(home, `node-${i}`, 'data', '__cluster_metadata-0', 'quorum-state');
        if (!existsSync(file)) continue;
        const state = JSON.parse(readFileSync(file, 'utf8')) as { leaderId?: number; leaderEpoch?: number };
        if ((state.leaderEpoch ?? -1) > best.leaderEpoch && (state.leaderId ?? -1) > 0) best = { leaderId: state.leaderId ?? -1, leaderEpoch: state.leaderEpoch ?? -1 };
      }
      assert.ok(best.leaderId > 0, 'an active controller in the quorum-state files');
      return best.leaderId;
    },
    async stop() {
      await clusterAdmin.close().catch(() => undefined);
      await slice.cleanup();
      await cluster.stop();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** The topics the load writes to (their leaders are the ones worth killing). */
export const LOADED_TOPICS = [topics.sessions, topics.cdrs, topics.locations] as const;

/** Common service settings for the cluster tests: short retries, loopback partners. */
export function serviceEnv(stack: TestStack, extra: Record<string, string> = {}): Record<string, string> {
  return stack.env({
    ALLOW_HTTP_PARTNER_URLS: 'true',
    PARTNER_ALLOWED_HOSTS: '127.0.0.1',
    APPEND_TIMEOUT_MS: '5000',
    DELIVERY_RETRY_SCHEDULE_MS: '200,500,1000,1000,2000,2000,2000,2000,2000,2000',
    DELIVERY_TIMEOUT_MS: '3000',
    ...extra,
  });
}

/** Keeps the services' log lines in .local/logs/cluster-<label>/ for a failure's post-mortem. */
export function keepLogs(label: string, services: readonly ServiceProcess[]): void {
  const dir = join(local, 'logs', `cluster-${label}`);
  mkdirSync(dir, { recursive: true });
  services.forEach((s, i) => writeFileSync(join(dir, `${s.name}-${i + 1}.log`), s.logs.join('\n')));
}
