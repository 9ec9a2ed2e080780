import { checkPositions, type ObservedTopic } from './position-check.ts';
import type { PositionsMismatch, StoredPositions, TopicBinding } from '@hub/core';

// EventLog.verifyPositions for either Kafka client: the client observes a topic (its cluster id and
// offset ranges), position-check.ts judges the stored positions against it.

/** Reads Kafka's topic id of each physical topic it can (topic-ids.ts). */
export type TopicIds = (physicalTopics: readonly string[]) => Promise<ReadonlyMap<string, string>>;

/**
 * Asks `ask` again while it fails with an error `retriable` accepts, for up to `retryForMs` (a leader
 * that just moved, a topic just created), as Kafka's own consumers do while joining their group.
 */
export async function retrying<T>(ask: () => Promise<T>, retriable: (e: unknown) => boolean, retryForMs: number, pauseMs = 200): Promise<T> {
  const giveUpAt = Date.now() + retryForMs;
  for (;;) {
    try {
      return await ask();
    } catch (e) {
      if (!retriable(e) || Date.now() >= giveUpAt) throw e;
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  }
}

/** Checks stored positions against the topics as they are; saves the binding of those that match. */
export async function verifyTopicPositions(observe: (physicalTopic: string) => Promise<ObservedTopic>, physicalTopics: readonly string[], positions: StoredPositions, options: { rebind?: boolean | undefined; topicIds?: TopicIds | undefined } = {}): Promise<PositionsMismatch[]> {
  const mismatches: PositionsMismatch[] = [];
  const bindings: Array<[string, TopicBinding]> = [];
  const ids = (await options.topicIds?.(physicalTopics)) ?? new Map<string, string>();
  for (const topic of physicalTopics) {
    const observed = { ...(await observe(topic)), topicId: ids.get(topic) };
    const stored = options.rebind ? new Map<number, bigint>() : await positions.load(topic);
    const bound = options.rebind ? undefined : await positions.loadBinding?.(topic);
    const checked = checkPositions(topic, observed, stored, bound);
    mismatches.push(...checked.mismatches);
    bindings.push([topic, checked.binding]);
  }
  // Bound only when every topic matches: a refusing consumer leaves the evidence as it found it.
  if (mismatches.length === 0 && positions.saveBinding) for (const [topic, binding] of bindings) await positions.saveBinding(topic, binding);
  return mismatches;
}
