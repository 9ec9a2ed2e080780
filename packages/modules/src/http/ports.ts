import type { DeliveryStore, EventLog, ReadModelStore } from '@hub/core';

// What the ingress uses of each port, and no more: the routes take these, so an adapter (Postgres,
// Kafka, or the in-memory ones of @hub/testing the route tests run on) needs only what is asked.

/** Appends events (every push, CDR and command). */
export type EventAppender = Pick<EventLog, 'append'>;

/** The read models as the location, tariff, token and command routes read them. */
export type ReadModelReads = Pick<ReadModelStore, 'listVisible' | 'findVisible' | 'exists' | 'locationOwners' | 'tokenOwners' | 'tokensByContractId'>;

/** CDR receipts, whether a session is held, and the queue a command result waits in. */
export type IngressDeliveries = Pick<DeliveryStore, 'receiveCdr' | 'markCdrAppended' | 'claimCdrAppend' | 'findCdr' | 'sessionExists' | 'enqueue'>;
