import { topics } from '@hub/events';
import type { EventLog } from '@hub/event-log';
import type { Logger } from '@hub/observability';
import { cdrPostedEvent } from '@hub/modules';
import type { CdrReceipts } from '@hub/store';

/**
 * The safety net for CDRs the hub received but never put on Kafka: the ingress validated and stored
 * one, then its append failed or timed out (the CPO was told to retry), and the CPO did not post it
 * again within `olderThanSeconds`. Appends them as the ingress would have (same ce_id, so an append
 * that did land after all is one event to consumers, and eMSPs get a CDR once), then marks them
 * appended. Returns how many.
 */
export async function appendUnappendedCdrs(
  deps: { deliveries: CdrReceipts; eventLog: EventLog; logger: Logger },
  olderThanSeconds: number,
  limit = 100,
): Promise<number> {
  const stranded = await deps.deliveries.unappendedCdrs(olderThanSeconds, limit);
  if (stranded.length === 0) return 0;
  await deps.eventLog.append(
    topics.cdrs,
    stranded.map((cdr) => cdrPostedEvent(cdr, cdr.document, cdr.contentHash, { source: 'prober' })),
  );
  for (const cdr of stranded) {
    await deps.deliveries.markCdrAppended(cdr);
    deps.logger.warn('CDR appended by the prober: its append at the ingress had not completed', { cdr: `${cdr.countryCode}/${cdr.partyId}/${cdr.id}` });
  }
  return stranded.length;
}
