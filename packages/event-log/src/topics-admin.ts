import { readFileSync } from 'node:fs';
import type { Admin } from 'kafkajs';

/** One entry of infra/topics.json. */
export interface TopicDefinition {
  readonly name: string;
  readonly partitions: number;
  /** Production replication; clamped to the brokers present (a local stack has one). */
  readonly replicationFactor: number;
  readonly config: Readonly<Record<string, string>>;
  readonly description?: string;
}

/** Reads a topic definition file ({ "topics": [...] }, as infra/topics.json). */
export function readTopicDefinitions(file: string): TopicDefinition[] {
  return (JSON.parse(readFileSync(file, 'utf8')) as { topics: TopicDefinition[] }).topics;
}

/**
 * Creates missing topics and raises partition counts that are below the definition. Existing topics
 * keep their data: a second start of the stack changes nothing. Returns the names it created.
 */
export async function ensureTopics(admin: Admin, definitions: readonly TopicDefinition[], prefix = ''): Promise<string[]> {
  const cluster = await admin.describeCluster();
  const brokers = cluster.brokers.length;
  const existing = new Set(await admin.listTopics());
  const name = (d: TopicDefinition) => (prefix ? `${prefix}.${d.name}` : d.name);
  const missing = definitions.filter((d) => !existing.has(name(d)));
  if (missing.length > 0) {
    await admin.createTopics({
      waitForLeaders: false,
      topics: missing.map((d) => {
        const replicationFactor = Math.min(d.replicationFactor, brokers);
        const configEntries = Object.entries(d.config)
          // min.insync.replicas above the replica count would refuse every acks=all write.
          .map(([k, v]) => ({ name: k, value: k === 'min.insync.replicas' ? String(Math.min(Number(v), replicationFactor)) : v }));
        return { topic: name(d), numPartitions: d.partitions, replicationFactor, configEntries };
      }),
    });
  }
  await waitForLeaders(admin, definitions.map(name));
  const present = definitions.filter((d) => existing.has(name(d)));
  if (present.length > 0) {
    const meta = await admin.fetchTopicMetadata({ topics: present.map(name) });
    const grow = meta.topics
      .map((t) => ({ t, d: present.find((d) => name(d) === t.name) }))
      .filter(({ t, d }) => d !== undefined && t.partitions.length < d.partitions)
      .map(({ t, d }) => ({ topic: t.name, count: d?.partitions ?? t.partitions.length }));
    if (grow.length > 0) await admin.createPartitions({ topicPartitions: grow });
  }
  return missing.map(name);
}

/** Waits until every partition of the topics has a leader (a fresh topic takes a moment). */
export async function waitForLeaders(admin: Admin, topicNames: readonly string[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const meta = await admin.fetchTopicMetadata({ topics: [...topicNames] });
      if (meta.topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))) return;
    } catch (e) {
      last = e; // UNKNOWN_TOPIC_OR_PARTITION while the controller propagates the new topic
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`topics without leaders after ${timeoutMs} ms: ${topicNames.join(', ')}`, { cause: last });
}
