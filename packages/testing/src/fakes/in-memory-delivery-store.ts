import type { CdrReceipt, DeliveryInput, DeliveryPosition, DeliveryStore } from '@hub/core';

// What the ingress's sessions, CDRs and commands routes need of the DeliveryStore port (@hub/store):
// the CDR receipts (postgres-cdr-receipts.ts) and, of the delivery queue, enqueueing, whether a session
// is held and the dispatcher's positions. delivery-store-contract.ts runs the same rules on Postgres.

type Json = Record<string, unknown>;

export type IngressDeliveryStore = Pick<DeliveryStore, 'receiveCdr' | 'markCdrAppended' | 'claimCdrAppend' | 'findCdr' | 'unappendedCdrCount' | 'enqueue' | 'sessionExists' | 'deliveryPositions'>;

export interface InMemoryDeliveryStore extends IngressDeliveryStore {
  /** The rows enqueued, in order (sessions, CDRs, command results). */
  readonly enqueued: readonly DeliveryInput[];
  /** The eMSP and CPO of the newest session row with this id delivered to an eMSP (commands: STOP_SESSION). */
  sessionRow(emsp: { countryCode: string; partyId: string }, sessionId: string): DeliveryInput | undefined;
}

const cdrKey = (c: { countryCode: string; partyId: string; id: string }) => `${c.countryCode}/${c.partyId}/${c.id.toUpperCase()}`;

export function inMemoryDeliveryStore(): InMemoryDeliveryStore {
  const cdrs = new Map<string, { contentHash: string; document: Json; appended: boolean; receivedAt: Date; appendStartedAt: number }>();
  const enqueued: DeliveryInput[] = [];
  const positions = new Map<string, Map<number, bigint>>();
  return {
    enqueued,
    async receiveCdr(cdr) {
      const held = cdrs.get(cdrKey(cdr));
      if (!held) {
        cdrs.set(cdrKey(cdr), { contentHash: cdr.contentHash, document: cdr.document, appended: false, receivedAt: new Date(), appendStartedAt: Date.now() });
        return 'new';
      }
      const receipt: CdrReceipt = held.contentHash !== cdr.contentHash ? 'conflict' : held.appended ? 'duplicate' : 'retry-append';
      return receipt;
    },
    async markCdrAppended(cdr) {
      const held = cdrs.get(cdrKey(cdr));
      if (held) held.appended = true;
    },
    async claimCdrAppend(cdr, settleSeconds) {
      const held = cdrs.get(cdrKey(cdr));
      if (!held || held.appended || held.appendStartedAt >= Date.now() - settleSeconds * 1000) return undefined;
      held.appendStartedAt = Date.now();
      return { receivedAt: held.receivedAt };
    },
    async findCdr(cdr) {
      const held = cdrs.get(cdrKey(cdr));
      return held?.appended ? held.document : undefined;
    },
    async unappendedCdrCount() {
      return [...cdrs.values()].filter((c) => !c.appended).length;
    },
    async enqueue(rows, position?: DeliveryPosition) {
      enqueued.push(...rows);
      if (position) {
        const key = `${position.consumerGroup}\u0000${position.topic}`;
        const map = positions.get(key) ?? new Map<number, bigint>();
        map.set(position.partition, BigInt(position.nextOffset));
        positions.set(key, map);
      }
      return { applied: 0, unapplied: [] };
    },
    async sessionExists(cpo, sessionId) {
      return enqueued.some(
        (r) => r.kind === 'session' && !r.patch && r.cpo.countryCode === cpo.countryCode.toUpperCase() && r.cpo.partyId === cpo.partyId.toUpperCase() && r.objectId.toUpperCase() === sessionId.toUpperCase(),
      );
    },
    async deliveryPositions(consumerGroup, topic) {
      return new Map(positions.get(`${consumerGroup}\u0000${topic}`) ?? []);
    },
    sessionRow(emsp, sessionId) {
      return enqueued.findLast((r) => r.kind === 'session' && !r.patch && r.emsp.countryCode === emsp.countryCode && r.emsp.partyId === emsp.partyId && r.objectId === sessionId);
    },
  };
}
