import type { PositionsMismatch, TopicBinding } from '@hub/core';

// Never silently skip data. Positions stored in Postgres are only meaningful for
// the topic partitions they were taken from. A consumer that seeks to a position of another cluster,
// or of a topic deleted and created again, would skip records (a position beyond the end makes Kafka
// wait for offsets that the new topic reaches only later; a position inside it skips what precedes).
//
// Kafka names a topic's incarnation by its topic id (KIP-516): a topic deleted and created again
// gets a new one. Only Metadata v10 and later carry it; it is read by topic-ids.ts, and a binding
// holds the id it saw. Beside the id, and
// for brokers or bindings without one, a topic's identity is checked by what is observable and
// cannot change for one incarnation of one topic:
// - the cluster id (DescribeCluster): another cluster, or a local one formatted anew;
// - the partition count: a topic is never shrunk, and one recreated with another count differs;
// - every partition's end offset and start offset never decrease (offsets only grow; retention and
//   deletion move the start forward). An end or start below the highest one seen before means the
//   log was recreated. Each start of a consumer records the highest values seen (the binding);
// - no stored position lies beyond its partition's end.
// Without topic ids these cannot see a topic recreated while no consumer started and filled past the
// old end again with its start still at 0; the id tells it apart.

export interface ObservedTopic {
  readonly clusterId: string;
  readonly ranges: ReadonlyMap<number, { readonly low: bigint; readonly high: bigint }>;
  /** Kafka's topic id, when it could be read. */
  readonly topicId?: string | undefined;
}

/** The mismatches of stored positions with the topic as it is, and the binding to store when none. */
export function checkPositions(
  topic: string,
  observed: ObservedTopic,
  positions: ReadonlyMap<number, bigint>,
  bound: TopicBinding | undefined,
): { mismatches: PositionsMismatch[]; binding: TopicBinding } {
  const reasons: string[] = [];
  if (bound && bound.clusterId !== observed.clusterId) {
    reasons.push(`its positions were taken from Kafka cluster ${bound.clusterId}, the brokers are cluster ${observed.clusterId}`);
  } else {
    if (bound?.topicId !== undefined && observed.topicId !== undefined && bound.topicId !== observed.topicId) {
      reasons.push(`its topic id was ${bound.topicId} and is now ${observed.topicId}: the topic was deleted and created again`);
    }
    if (bound && bound.partitions !== observed.ranges.size) reasons.push(`it had ${bound.partitions} partitions and now has ${observed.ranges.size}: the topic was recreated`);
    for (const [partition, { low, high }] of observed.ranges) {
      const end = bound?.ends.get(partition);
      const start = bound?.starts.get(partition);
      if (end !== undefined && high < end) reasons.push(`partition ${partition} ends at ${high}, below the ${end} seen before: the topic was recreated`);
      else if (start !== undefined && low < start) reasons.push(`partition ${partition} starts at ${low}, below the ${start} seen before: the topic was recreated`);
    }
  }
  for (const [partition, position] of positions) {
    const range = observed.ranges.get(partition);
    if (!range) reasons.push(`a position is stored for partition ${partition}, which the topic does not have`);
    else if (position > range.high) reasons.push(`the position ${position} of partition ${partition} is beyond its end ${range.high}`);
  }
  const max = (a: bigint | undefined, b: bigint) => (a !== undefined && a > b ? a : b);
  const sameCluster = !bound || bound.clusterId === observed.clusterId;
  const binding: TopicBinding = {
    clusterId: observed.clusterId,
    partitions: observed.ranges.size,
    ends: new Map([...observed.ranges].map(([p, r]) => [p, sameCluster ? max(bound?.ends.get(p), r.high) : r.high])),
    starts: new Map([...observed.ranges].map(([p, r]) => [p, sameCluster ? max(bound?.starts.get(p), r.low) : r.low])),
    topicId: observed.topicId ?? (sameCluster ? bound?.topicId : undefined),
  };
  return { mismatches: reasons.length > 0 ? [{ topic, reason: reasons.slice(0, 3).join('; ') + (reasons.length > 3 ? ` (and ${reasons.length - 3} more)` : '') }] : [], binding };
}
