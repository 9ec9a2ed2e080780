import { topics } from '@hub/events';
import type { EventLog } from '@hub/event-log';
import type { ProjectedRecord, ReadModel, ReadModelStore } from '@hub/store';

// Rebuild of a read model from its topic while the old one keeps serving (issue #3, Projector):
// a new generation is filled from the beginning of the topic by a consumer of its own, then made
// active in one transaction once it holds at least everything the live projection holds.

export interface RebuildProgress {
  readonly applied: bigint;
  readonly target: bigint;
  readonly eventsPerSecond: number;
}

export interface RebuildResult {
  readonly model: ReadModel;
  readonly generation: number;
  readonly events: bigint;
  readonly rows: number;
  readonly seconds: number;
  readonly eventsPerSecond: number;
}

const TOPIC: Record<ReadModel, string> = { locations: topics.locations, tariffs: topics.tariffs };

export async function rebuildReadModel(
  deps: { eventLog: EventLog; store: ReadModelStore },
  model: ReadModel,
  onProgress: (p: RebuildProgress) => void,
  options: { switchTimeoutMs?: number } = {},
): Promise<RebuildResult> {
  const started = Date.now();
  const { building } = await deps.store.beginRebuild(model);
  const topic = TOPIC[model];
  const target = await deps.eventLog.latestOffsets(topic);
  const targetTotal = [...target.values()].reduce((a, b) => a + b, 0n);
  const applied = async () => [...(await deps.store.positions(model, building)).values()].reduce((a, b) => a + b, 0n);

  const groupId = `rebuild-${model}-g${building}-${Date.now()}`;
  // Large fetches make large batches: one transaction applies thousands of events.
  const consumer = deps.eventLog.consumer(groupId, { maxBytesPerPartition: 8 * 1024 * 1024 });
  await consumer.connect();
  await consumer.subscribe({ topic: deps.eventLog.physical(topic), fromBeginning: true });
  const state: { failure?: Error } = {};
  const rethrow = (): void => {
    if (state.failure) throw state.failure;
  };
  await consumer.run({
    eachBatchAutoResolve: true,
    // Partitions are independent: apply several at once (each in its own transaction).
    partitionsConsumedConcurrently: 3,
    eachBatch: async ({ batch }) => {
      const records: ProjectedRecord[] = batch.messages.map((message) => {
        const decoded = deps.eventLog.decode(batch.topic, batch.partition, message);
        return decoded
          ? { offset: message.offset, type: decoded.event.type, subject: decoded.event.subject, data: decoded.event.data as Record<string, unknown> }
          : { offset: message.offset, type: 'unreadable', subject: '', data: {} };
      });
      try {
        await deps.store.applyBatch(model, batch.partition, records, building);
      } catch (e) {
        state.failure = e instanceof Error ? e : new Error(String(e));
        throw e;
      }
    },
  });

  try {
    // Fill up to the head as it was at the start, reporting progress.
    for (;;) {
      rethrow();
      const done = await applied();
      const seconds = (Date.now() - started) / 1000;
      onProgress({ applied: done, target: targetTotal, eventsPerSecond: seconds > 0 ? Number(done) / seconds : 0 });
      if (done >= targetTotal) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    // Live traffic kept arriving meanwhile: switch as soon as the new generation is not behind.
    const deadline = Date.now() + (options.switchTimeoutMs ?? 120_000);
    while (!(await deps.store.switchOver(model, building))) {
      rethrow();
      if (Date.now() > deadline) throw new Error('the rebuild could not catch up with the live projection in time; the old read model keeps serving');
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await consumer.disconnect();
    const admin = deps.eventLog.admin();
    await admin.connect();
    // The rebuild's consumer group served once; leave no stale group behind.
    await admin.deleteGroups([deps.eventLog.physicalGroup(groupId)]).catch(() => undefined);
    await admin.disconnect();
  }
  const events = await applied();
  const seconds = (Date.now() - started) / 1000;
  // The old generation is no longer served: drop its rows, reclaim the space, refresh statistics.
  await deps.store.maintain(model);
  return { model, generation: building, events, rows: await deps.store.counts(model, building), seconds, eventsPerSecond: Number(events) / Math.max(seconds, 0.001) };
}

/** A one-line progress bar for a terminal (carriage return, no newline). */
export function progressBar(p: RebuildProgress, width = 30): string {
  const ratio = p.target === 0n ? 1 : Number(p.applied) / Number(p.target);
  const filled = Math.min(width, Math.round(ratio * width));
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(ratio * 100).toFixed(0).padStart(3)}% ${p.applied}/${p.target} events, ${p.eventsPerSecond.toFixed(0)} ev/s`;
}
