import { failureKindOf } from '@hub/core';
import { recipientOf, sessionEventTypes, topics } from '@hub/events';
import type { ConsumedRecord, DeliveryInput, DeliveryKind, DeliveryStore, EventLog, QuarantineStore } from '@hub/core';
import { moduleOfDelivery, parseSubject } from '@hub/modules';
import { applyIsolating, RetryLater, type Item } from '@hub/service-kit';

// Replay of a topic to one eMSP (Operators): for an eMSP that lost data, every session or
// CDR addressed to it from an offset or a point in time is made pending again and delivered anew.

export interface ReplayOptions {
  readonly kind: DeliveryKind;
  readonly emsp: { countryCode: string; partyId: string };
  readonly fromTime?: Date;
  readonly fromOffset?: bigint;
  /** Records per second at most (0: no cap). */
  readonly ratePerSecond: number;
  readonly dryRun: boolean;
  /** The consumer group its quarantined records are filed under (the dispatcher's: it re-drives them). */
  readonly quarantineGroup?: string;
}

export interface ReplayProgress {
  readonly scanned: number;
  readonly matched: number;
  readonly total: number;
}

/**
 * Reads the topic partition by partition up to its head at the start, with a consumer group of its own.
 * Long because: one scan of a topic whose start offsets, batch handler and counters (scanned, matched,
 * enqueued, finished partitions) are shared until the scan ends.
 */
export async function replayToEmsp(
  deps: { eventLog: EventLog; deliveries: DeliveryStore; quarantine: QuarantineStore },
  options: ReplayOptions,
  onProgress: (p: ReplayProgress) => void,
): Promise<{ scanned: number; matched: number; enqueued: number }> {
  const topic = topics[moduleOfDelivery(options.kind).topic];
  const heads = await deps.eventLog.latestOffsets(topic);
  const starts = new Map<number, bigint>();
  if (options.fromTime) {
    for (const [partition, offset] of await deps.eventLog.offsetsAt(topic, options.fromTime)) starts.set(partition, offset);
  } else {
    for (const p of heads.keys()) starts.set(p, options.fromOffset ?? 0n);
  }
  // Records before a partition's log start are gone (retention): start there, or a partition with
  // nothing left between its start and head would be waited for forever.
  for (const [partition, { low }] of await deps.eventLog.offsetRanges(topic)) {
    if ((starts.get(partition) ?? 0n) < low) starts.set(partition, low);
  }
  const total = [...heads].reduce((n, [p, head]) => n + Math.max(0, Number(head - (starts.get(p) ?? 0n))), 0);
  const groupId = `replay-${options.emsp.countryCode}${options.emsp.partyId}-${Date.now()}`;
  let subscription: { stop(): Promise<void> } | undefined;
  let scanned = 0;
  let matched = 0;
  let enqueued = 0;
  const finished = new Set<number>([...heads].filter(([p, head]) => (starts.get(p) ?? 0n) >= head).map(([p]) => p));
  const started = Date.now();
  try {
    if (finished.size < heads.size) {
      let done: () => void = () => undefined;
      const complete = new Promise<void>((resolve) => (done = resolve));
      // A one-off group of its own, read from the start of the topic (records before `starts` skipped here).
      subscription = await deps.eventLog.subscribe({
        group: groupId,
        topics: [topic],
        ephemeral: true,
        onBatch: async (batch) => {
          const head = heads.get(batch.partition) ?? 0n;
          const rows: Array<Item<DeliveryInput & { message: ConsumedRecord }>> = [];
          for (const message of batch.records) {
            const offset = BigInt(message.offset);
            if (offset < (starts.get(batch.partition) ?? 0n) || offset >= head) continue;
            scanned++;
            const event = message.event;
            const path = event ? parseSubject(event.subject) : undefined;
            // A session PATCH need not name the eMSP: the store applies it to this eMSP's sessions only.
            const patch = event?.type === sessionEventTypes.sessionPatched;
            const to = event ? recipientOf(event) : undefined;
            if (!event || !path || (!patch && (to?.countryCode !== options.emsp.countryCode || to.partyId !== options.emsp.partyId))) continue;
            matched++;
            rows.push({ record: {
              message,
              kind: options.kind,
              emsp: options.emsp,
              cpo: { countryCode: path.countryCode, partyId: path.partyId },
              objectId: path.id,
              partition: batch.partition,
              offset: message.offset,
              payload: event.data as Record<string, unknown>,
              correlationId: event.correlationId,
              eventTime: event.time,
              ...(patch ? { patch: true } : {}),
            } });
          }
          if (!options.dryRun && rows.length > 0) {
            // The rate cap paces the hand-off to the delivery workers.
            if (options.ratePerSecond > 0) {
              const earliest = started + ((enqueued + rows.length) / options.ratePerSecond) * 1000;
              const wait = earliest - Date.now();
              if (wait > 0) await new Promise((r) => setTimeout(r, wait));
            }
            enqueued += await enqueuePoisonProof(deps, options.quarantineGroup ?? 'dispatcher', batch.topic, batch.partition, rows);
          }
          onProgress({ scanned, matched, total });
          const last = BigInt(batch.lastOffset);
          if (last + 1n >= head) finished.add(batch.partition);
          if (finished.size >= heads.size) done();
        },
      });
      await complete;
    }
  } finally {
    await subscription?.stop();
  }
  onProgress({ scanned, matched, total });
  return { scanned, matched, enqueued };
}

/**
 * Enqueues a batch as the dispatcher would (service-kit, poison-proof apply): a record Postgres cannot
 * store is quarantined for the dispatcher to re-drive, the others are enqueued; a Postgres failure is
 * retried with backoff a few times before the replay gives up (it does not loop forever).
 */
async function enqueuePoisonProof(
  deps: { deliveries: DeliveryStore; quarantine: QuarantineStore },
  group: string,
  topic: string,
  partition: number,
  rows: ReadonlyArray<Item<DeliveryInput & { message: ConsumedRecord }>>,
): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    let enqueued = 0;
    try {
      await applyIsolating(
        rows,
        async (chunk) => {
          const quarantined = chunk.filter((i) => i.quarantine);
          if (quarantined.length > 0) {
            await deps.quarantine.insert(
              quarantined.map((i) => ({ consumerGroup: group, record: i.record.message, failureKind: i.quarantine?.failure ?? 'record', reason: i.quarantine?.reason ?? '' })),
            );
          }
          enqueued += await deps.deliveries.enqueueForced(chunk.filter((i) => !i.quarantine).map((i) => i.record));
        },
        failureKindOf,
      );
      return enqueued;
    } catch (e) {
      if (!(e instanceof RetryLater) || attempt >= 8) throw e;
      await new Promise((r) => setTimeout(r, Math.min(10_000, 200 * 2 ** attempt)));
    }
  }
}
