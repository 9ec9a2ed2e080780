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

/** A consumer's start held back while its stored positions do not match the topics. */
export interface PositionGate {
  mismatches(): readonly PositionsMismatch[];
  /** No more rechecks (the subscription stops). */
  cancel(): void;
}

export interface PositionGateOptions {
  readonly positions: StoredPositions | undefined;
  /** The check of the stored positions against the topics as they are (verifyTopicPositions). */
  readonly verify: (positions: StoredPositions) => Promise<PositionsMismatch[]>;
  /** Joins the group and consumes: called once the positions match. */
  readonly run: () => Promise<void>;
  readonly stopped: () => boolean;
  readonly onMismatch?: ((mismatches: readonly PositionsMismatch[]) => void) | undefined;
  readonly recheckMs?: number | undefined;
  readonly warn: (err: unknown) => void;
}

/**
 * Either client's consumer start: the positions are checked before the consumer joins its group, and
 * again every recheckMs while they mismatch, so once an operator ran the fix (hubctl positions reset)
 * the consumer starts. The first check and start fail the caller (as a consumer that cannot connect
 * did); later rechecks only warn and try again.
 */
export async function startWhenPositionsMatch(options: PositionGateOptions): Promise<PositionGate> {
  let mismatches: PositionsMismatch[] = [];
  let recheck: NodeJS.Timeout | undefined;
  const later = (): void => {
    recheck = setTimeout(() => void start().catch(retry), options.recheckMs ?? 5_000);
  };
  const start = async (): Promise<void> => {
    if (options.stopped()) return;
    const positions = options.positions;
    if (positions?.loadBinding) {
      const found = await options.verify(positions);
      // Reported when the set of refused topics changes, not when a reason's figures do: a live
      // topic's end grows while the consumer waits, and one warning per recheck would drown the log.
      const topicsOf = (list: readonly PositionsMismatch[]) => list.map((m) => m.topic).sort().join('\n');
      const changed = topicsOf(found) !== topicsOf(mismatches);
      mismatches = found;
      if (found.length > 0) {
        if (changed) options.onMismatch?.(found);
        return later();
      }
    }
    if (!options.stopped()) await options.run();
  };
  const retry = (err: unknown): void => {
    if (options.stopped()) return;
    options.warn(err);
    later();
  };
  await start();
  return { mismatches: () => mismatches, cancel: () => clearTimeout(recheck) };
}
