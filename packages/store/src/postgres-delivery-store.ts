import type { Database } from './pool.ts';
import { postgresCdrReceipts } from './postgres-cdr-receipts.ts';
import type { DeliveryStore } from '@hub/core';
import { postgresDeliveryQueue } from './postgres-delivery-queue.ts';

export { DELIVERIES_CHANNEL, RECIPIENT_CC, RECIPIENT_PID } from './delivery-rows.ts';

// What the ingress's sessions and CDRs routes, the prober's CDR relay and hubctl use: the CDR
// receipts and the delivery queue together (the store split by what it owns; the routing is
// postgres-routing-directory.ts).


export function postgresDeliveryStore(db: Database): DeliveryStore {
  return { ...postgresCdrReceipts(db), ...postgresDeliveryQueue(db) };
}
