import type { EventLog, ProjectionWait, ReadModel, ReadModelStore } from '@hub/core';

export type { ProjectionWait };

// Whether a read model has applied everything appended to its topic so far (read-your-writes): the
// ingress asks it before answering a PATCH of an object it may not see yet, the dispatcher before
// re-sending an eMSP's tokens from the tokens read model.

export function projectionWait(
  eventLog: Pick<EventLog, 'latestOffsets'>,
  store: Pick<ReadModelStore, 'positions'>,
  /** The model's topic (the module table's topicOf). */
  topicOf: (model: ReadModel) => string,
  timeoutMs: number,
  pollMs = 5,
): ProjectionWait {
  return {
    async caughtUp(model) {
      const heads = await eventLog.latestOffsets(topicOf(model));
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const positions = await store.positions(model);
        if ([...heads].every(([partition, head]) => head === 0n || (positions.get(partition) ?? 0n) >= head)) return true;
        if (Date.now() >= deadline) return false;
        await new Promise((r) => setTimeout(r, pollMs));
      }
    },
  };
}
