import type { ConsumedEvent } from '@hub/event-log';
import { recipientOf, topics } from '@hub/events';
import type { Gauge } from '@hub/observability';
import { parseSubject } from '@hub/read-models';
import { applyIsolating, consumerWatch, hasObjectData, rawRecord, seekToStoredPositions, type Item, type ServiceShell } from '@hub/service-kit';
import { postgresFailureKind, postgresQuarantineStore, type DeliveryInput, type DeliveryStore, type EnqueueReport, type RawRecord } from '@hub/store';
import type { DispatcherConfig } from './config.ts';
import { isSessionPatch } from './session-patch.ts';

// The dispatcher's consumer half (interface document, Events; reference design, Delivery rules): a
// consumer group over the sessions and CDRs topics that turns each event into a durable delivery
// record in Postgres, with the position, and only then commits the Kafka offset (never lost, never
// blocked). A record that cannot become a row (not an event, or a payload Postgres refuses) is
// quarantined in the same statement; a Postgres failure keeps the partition waiting (service-kit).

type Json = Record<string, unknown>;
type DeliveryKind = 'session' | 'cdr';

/** The delivery row one consumed event becomes; undefined for an event without an OCPI object path. */
export function deliveryInputOf(kind: DeliveryKind, decoded: ConsumedEvent): DeliveryInput | undefined {
  const path = parseSubject(decoded.event.subject);
  if (!path) return undefined;
  const data = decoded.event.data as Json;
  return {
    kind,
    // The event's ocpi-to (recipientOf). The ingress refuses records without an eMSP in cdr_token;
    // anything else is resolved (and if need be parked as unroutable, with its reason) at delivery
    // time. A session PATCH without one goes to the eMSP of the session it patches (session-fold.ts).
    emsp: recipientOf(decoded.event) ?? { countryCode: '??', partyId: '???' },
    cpo: { countryCode: path.countryCode, partyId: path.partyId },
    objectId: path.id,
    partition: decoded.partition,
    offset: decoded.offset,
    payload: data,
    correlationId: decoded.event.correlationId,
    eventTime: decoded.event.time,
    // A session PATCH is merged by the store into the newest full session it holds (session-patch.ts).
    ...(isSessionPatch(decoded.event.type) ? { patch: true } : {}),
  };
}

type Consumed = { readonly raw: RawRecord; readonly row?: DeliveryInput; readonly ceType?: string; readonly ceId?: string };

export async function startDeliveryConsumer(
  config: DispatcherConfig,
  shell: ServiceShell,
  deps: { deliveries: DeliveryStore; lag: Gauge<'group' | 'topic' | 'partition'>; wake: () => void; reportSessionPatches: (report: EnqueueReport) => void },
): Promise<{ stop(): Promise<void> }> {
  const { logger, metrics, eventLog, pool } = shell;
  const { deliveries, lag, wake, reportSessionPatches } = deps;
  const group = config.groupId;
  const kindOf = new Map([
    [eventLog.physical(topics.sessions), 'session' as const],
    [eventLog.physical(topics.cdrs), 'cdr' as const],
  ]);
  const watch = consumerWatch({ group, metrics, logger, quarantine: postgresQuarantineStore(pool), stuckAfterMs: config.consumerStuckAfterMs });
  shell.addHealthProblems(() => watch.problems());
  const decodeRow = (topic: string, raw: RawRecord, message: Parameters<typeof eventLog.decode>[2]): Consumed => {
    const kind = kindOf.get(topic) ?? kindOf.get(eventLog.physical(topic));
    const decoded = eventLog.decode(topic, raw.partition, message);
    const row = kind && decoded && hasObjectData(decoded.event) ? deliveryInputOf(kind, decoded) : undefined;
    return { raw, ...(row ? { row } : {}), ...(decoded ? { ceType: decoded.event.type, ceId: decoded.event.id } : {}) };
  };
  // Re-drives (hubctl quarantine redrive) make the delivery row as the consumer would; the store's
  // newest-wins rule keeps an older session state from replacing a newer one.
  watch.startRedrives(async (q) => {
    const { row } = decodeRow(q.record.topic, q.record, { ...q.record, timestamp: '0', attributes: 0 });
    if (!row) throw Object.assign(new Error('not an event of the hub with an OCPI object path'), { code: '22000' });
    reportSessionPatches(await deliveries.enqueue([row]));
    wake();
    return 'redriven';
  }, postgresFailureKind);

  const consumer = eventLog.consumer(group);
  await consumer.connect();
  for (const topic of kindOf.keys()) await consumer.subscribe({ topic, fromBeginning: true });
  // Each partition starts where the delivery rows end (the position stored with them): if Postgres
  // lost recent rows (a failover, a restore), their events are read and enqueued again.
  consumer.on(consumer.events.GROUP_JOIN, (e) => watch.assigned(e.payload.memberAssignment));
  seekToStoredPositions(consumer, logger, (topic) => (kindOf.has(topic) ? deliveries.deliveryPositions(group, topic) : undefined));
  await consumer.run({
    eachBatchAutoResolve: false,
    // Partitions are handed off in parallel (each keeps its order): a fetch spanning twelve partitions
    // does not wait for twelve Postgres round trips one after the other.
    partitionsConsumedConcurrently: 6,
    eachBatch: async (payload) => {
      const { batch } = payload;
      if (!kindOf.has(batch.topic) || batch.messages.length === 0 || !payload.isRunning() || payload.isStale()) return;
      const items: Array<Item<Consumed>> = batch.messages.map((message) => {
        const consumed = decodeRow(batch.topic, rawRecord(batch.topic, batch.partition, message), message);
        return consumed.row ? { record: consumed } : { record: consumed, quarantine: { failure: 'undecodable', reason: 'not an event of the hub with an OCPI object path (CloudEvents binary mode with a JSON object as data)' } };
      });
      const done = await watch.guard({ topic: batch.topic, partition: batch.partition, firstOffset: batch.firstOffset() ?? '0' }, () => payload.pause(), async () => {
        const quarantined = await applyIsolating(
          items,
          async (chunk) => {
            const last = chunk[chunk.length - 1] as Item<Consumed>;
            // Durable hand-off first, offset second: a crash in between re-reads the batch, and the
            // records it re-enqueues are no-ops (same offsets). The position is stored with the rows.
            reportSessionPatches(
              await deliveries.enqueue(
                chunk.flatMap((i) => (i.quarantine || !i.record.row ? [] : [i.record.row])),
                { consumerGroup: group, topic: batch.topic, partition: batch.partition, nextOffset: (BigInt(last.record.raw.offset) + 1n).toString() },
                chunk.flatMap((i) => (i.quarantine ? [{ consumerGroup: group, record: i.record.raw, ceType: i.record.ceType, ceId: i.record.ceId, failureKind: i.quarantine.failure, reason: i.quarantine.reason }] : [])),
              ),
            );
          },
          postgresFailureKind,
        );
        watch.quarantined(batch.topic, quarantined.length);
        for (const q of quarantined) logger.error('record quarantined: it cannot become a delivery row', { topic: batch.topic, partition: batch.partition, offset: q.record.raw.offset, reason: q.quarantine?.reason });
      });
      if (!done) return;
      payload.resolveOffset(batch.lastOffset());
      await payload.commitOffsetsIfNecessary();
      lag.set({ group, topic: batch.topic, partition: String(batch.partition) }, Number(batch.offsetLag()));
      await payload.heartbeat();
      wake();
    },
  });
  return {
    async stop() {
      watch.stop();
      await consumer.disconnect();
    },
  };
}
