import type { CdrReceipts, EventLog } from '@hub/core';
import type { Counter, Logger } from '@hub/observability';
import { appendCdrEventsOnce, cdrPostedEvent } from '@hub/modules';

/**
 * The safety net for CDRs the hub received but never put on Kafka: the ingress validated and stored
 * one, then its append failed or timed out (the CPO was told to retry), and the CPO did not post it
 * again within `olderThanSeconds`. An append that timed out may have landed: each CDR is looked for
 * in its partition first and only appended when absent (same event as the ingress's: same ce_id and
 * ce_source), so each CDR is in the stream once (docs/decisions/0003-each-cdr-once.md). Both are
 * marked appended. Returns how many were handled.
 */
export async function appendUnappendedCdrs(
  deps: { deliveries: CdrReceipts; eventLog: Pick<EventLog, 'append' | 'findEvents'>; logger: Logger; source: string; reappends?: Counter<'outcome'> },
  olderThanSeconds: number,
  limit = 100,
): Promise<number> {
  // Taken (their append_started_at set to now): an ingress retry of one of them waits a settle window.
  const stranded = await deps.deliveries.unappendedCdrs(olderThanSeconds, limit);
  if (stranded.length === 0) return 0;
  const events = stranded.map((cdr) => ({ cdr, event: cdrPostedEvent(cdr, cdr.document, cdr.contentHash, { source: deps.source }), receivedAt: cdr.receivedAt }));
  const { appended, present } = await appendCdrEventsOnce(deps.eventLog, events);
  deps.reappends?.inc({ outcome: 'appended' }, appended.length);
  deps.reappends?.inc({ outcome: 'already_present' }, present.length);
  const appendedIds = new Set(appended.map((e) => e.id));
  for (const { cdr, event } of events) {
    await deps.deliveries.markCdrAppended(cdr);
    deps.logger.warn(
      appendedIds.has(event.id) ? 'CDR appended by the prober: its append at the ingress had not completed' : 'CDR found in its partition already: its append at the ingress had landed unacknowledged',
      { cdr: `${cdr.countryCode}/${cdr.partyId}/${cdr.id}` },
    );
  }
  return stranded.length;
}
