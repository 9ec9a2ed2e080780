import type { Pool } from './pool.ts';
import { postgresCdrReceipts, type CdrReceipts } from './postgres-cdr-receipts.ts';
import { postgresDeliveryQueue, type DeliveryQueue } from './postgres-delivery-queue.ts';

export type { EnqueueReport } from './delivery-enqueue.ts';
export { DELIVERIES_CHANNEL, RECIPIENT_CC, RECIPIENT_PID, recipientOfDelivery, sourceTime, type Delivery, type DeliveryFilter, type DeliveryInput, type DeliveryKind, type DeliveryPosition, type DeliveryState } from './delivery-records.ts';

// What the ingress's sessions and CDRs routes, the prober's CDR relay and hubctl use: the CDR
// receipts and the delivery queue together (the store split by what it owns; the routing is
// postgres-routing-directory.ts).

export interface DeliveryStore extends CdrReceipts, DeliveryQueue {}

export function postgresDeliveryStore(pool: Pool): DeliveryStore {
  return { ...postgresCdrReceipts(pool), ...postgresDeliveryQueue(pool) };
}
