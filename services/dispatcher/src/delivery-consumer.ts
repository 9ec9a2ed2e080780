import { failureKindOf, decodeRecord, RecordRejected, EVERY_ROUTED_CPO, type ConsumedRecord, type DeliveryInput, type DeliveryKind, type DeliveryStore, type EnqueueReport, type RawRecord } from '@hub/core';
import { recipientOf, type HubEvent } from '@hub/events';
import type { Gauge } from '@hub/observability';
import type { PartyRef } from '@hub/ocpi';
import { consumedDeliveryModules, moduleOfDelivery, ocpiModules, parseSubject, topicOf } from '@hub/modules';
import { consumerWatch, hasObjectData, type ServiceShell } from '@hub/service-kit';
import { postgresQuarantineStore } from '@hub/store';
import type { DispatcherConfig } from './config.ts';
import { subscribeRows } from './row-subscription.ts';
import { isPatch } from './session-patch.ts';

// The dispatcher's consumer half (interface document, Events; reference design, Delivery rules): a
// consumer group over the sessions and CDRs topics that turns each event into a durable delivery
// record in Postgres, with the position, and only then commits the Kafka offset (never lost, never
// blocked). A record that cannot become a row (not an event, or a payload Postgres refuses) is
// quarantined in the same statement; a Postgres failure keeps the partition waiting (service-kit).

type Json = Record<string, unknown>;

/** The delivery row one consumed event becomes; undefined for an event without an OCPI object path. */
export function deliveryInputOf(
  kind: DeliveryKind,
  decoded: { readonly partition: number; readonly offset: string; readonly event: HubEvent },
  hubParty: PartyRef = { countryCode: '', partyId: '' },
): DeliveryInput | undefined {
  const path = parseSubject(decoded.event.subject);
  if (!path) return undefined;
  const data = decoded.event.data as Json;
  const owner = { countryCode: path.countryCode, partyId: path.partyId };
  const recipient = recipientOf(decoded.event);
  // The module table's owner says which side of the pair the path names. A CPO's object (session,
  // CDR) goes to the eMSP its ocpi-to names; an eMSP's token to the CPO its ocpi-to names, else to
  // every routed CPO (the store fans it out, token-fold.ts). An ocpi-to naming the hub itself is a
  // Broadcast Push (transport_and_format.asciidoc): every routed CPO, sent with the hub's OCPI-from.
  const broadcast = recipient !== undefined && recipient.countryCode === hubParty.countryCode && recipient.partyId === hubParty.partyId;
  const pair = moduleOfDelivery(kind).owner === 'EMSP' ? { emsp: owner, cpo: broadcast ? EVERY_ROUTED_CPO : (recipient ?? EVERY_ROUTED_CPO), ...(broadcast ? { fromHub: true } : {}) } : {
    // The event's ocpi-to (recipientOf). The ingress refuses records without an eMSP in cdr_token;
    // anything else is resolved (and if need be parked as unroutable, with its reason) at delivery
    // time. A session PATCH without one goes to the eMSP of the session it patches (session-fold.ts).
    emsp: recipient ?? { countryCode: '??', partyId: '???' },
    cpo: owner,
  };
  return {
    kind,
    ...pair,
    objectId: path.id,
    partition: decoded.partition,
    offset: decoded.offset,
    payload: data,
    correlationId: decoded.event.correlationId,
    eventTime: decoded.event.time,
    // A session or token PATCH is merged by the store into the newest full object it holds (session-patch.ts, token-fold.ts).
    ...(isPatch(decoded.event.type) ? { patch: true } : {}),
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
  // The topics whose events become deliveries, and as what (the module table's delivery rules).
  const kindOf = new Map(consumedDeliveryModules.map((m) => [eventLog.physical(topicOf(m)), ocpiModules[m].delivery.kind] as const));
  const watch = consumerWatch({ group, metrics, logger, quarantine: postgresQuarantineStore(pool), stuckAfterMs: config.consumerStuckAfterMs });
  shell.addHealthProblems(() => watch.problems());
  const decodeRow = (raw: RawRecord, event: HubEvent | undefined): Consumed => {
    const kind = kindOf.get(raw.topic) ?? kindOf.get(eventLog.physical(raw.topic));
    const row = kind && event && hasObjectData(event) ? deliveryInputOf(kind, { partition: raw.partition, offset: raw.offset, event }, config.hubParty) : undefined;
    return { raw, ...(row ? { row } : {}), ...(event ? { ceType: event.type, ceId: event.id } : {}) };
  };
  // Re-drives (hubctl quarantine redrive) make the delivery row as the consumer would; the store's
  // newest-wins rule keeps an older session state from replacing a newer one.
  watch.startRedrives(async (q) => {
    const { row } = decodeRow(q.record, decodeRecord(q.record));
    if (!row) throw new RecordRejected('undecodable', 'not an event of the hub with an OCPI object path');
    reportSessionPatches(await deliveries.enqueue([row]));
    wake();
    return 'redriven';
  }, failureKindOf);

  return subscribeRows(shell, {
    group,
    topics: consumedDeliveryModules.map((m) => topicOf(m)),
    deliveries,
    watch,
    lag,
    // A fetch spanning twelve partitions does not wait for twelve Postgres round trips one after the other.
    concurrency: 6,
    decode: (record: ConsumedRecord) => {
      const consumed = decodeRow(record, record.event);
      return consumed.row ? { record: consumed } : { record: consumed, quarantine: { failure: 'undecodable', reason: 'not an event of the hub with an OCPI object path (CloudEvents binary mode with a JSON object as data)' } };
    },
    apply: async (chunk, position) =>
      reportSessionPatches(
        await deliveries.enqueue(
          chunk.flatMap((i) => (i.quarantine || !i.record.row ? [] : [i.record.row])),
          position,
          chunk.flatMap((i) => (i.quarantine ? [{ consumerGroup: group, record: i.record.raw, ceType: i.record.ceType, ceId: i.record.ceId, failureKind: i.quarantine.failure, reason: i.quarantine.reason }] : [])),
        ),
      ),
    quarantinedMessage: 'record quarantined: it cannot become a delivery row',
    wake,
  });
}
