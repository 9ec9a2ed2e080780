import type { TopicDefinition } from '@hub/events';

// The shapes of the hub's topics (docs/decisions/0006-retention.md, 0014-snapshot-topics.md): each
// module declares its own with these, and infra/generate-topics.ts writes them to infra/topics.json.
// Replication is the production value (a local single broker clamps it to 1); min.insync.replicas 2
// with acks=all is what makes an acknowledged append durable.

export const RETAIN_FOREVER = '-1';
export const RETAIN_7_DAYS = '604800000';
/** Changes a snapshot topic backs: 30 days (HUB_CHANGE_RETENTION_MS overrides it at creation). */
export const RETAIN_30_DAYS = '2592000000';

/** A topic of events, deleted by age. */
export function eventTopic(name: string, partitions: number, retentionMs: string, description: string): TopicDefinition {
  return { name, partitions, replicationFactor: 3, config: { 'retention.ms': retentionMs, 'min.insync.replicas': '2', 'cleanup.policy': 'delete' }, description };
}

/**
 * The compacted snapshot of a projected model: one record per live object, a tombstone kept as long
 * as the change topic's events, as many partitions as the change topic (decision 0014).
 */
export function snapshotTopic(name: string, partitions: number, description: string): TopicDefinition {
  return {
    name,
    partitions,
    replicationFactor: 3,
    config: { 'cleanup.policy': 'compact', 'min.insync.replicas': '2', 'delete.retention.ms': RETAIN_30_DAYS, 'min.cleanable.dirty.ratio': '0.5', 'segment.ms': '3600000', 'max.message.bytes': '8388608' },
    description,
  };
}

/**
 * A change topic whose live objects a snapshot topic keeps: its events may be deleted by age
 * (HUB_CHANGE_RETENTION_MS at creation), and the snapshot keeps tombstones as long (decision 0014).
 */
export function backedBy(snapshot: string, change: TopicDefinition): TopicDefinition {
  return { ...change, snapshot };
}
