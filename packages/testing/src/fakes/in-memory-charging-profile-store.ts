import type { ChargingProfileRequestRecord, ChargingProfileStore } from '@hub/core';
import type { InMemoryDeliveryStore } from './in-memory-delivery-store.ts';

// The ChargingProfileStore port (@hub/store, postgres-charging-profile-store.ts) in memory: a request's
// life from the eMSP to its result or the hub's timeout answer; a session's parties come from the
// session rows enqueued, as in Postgres.

type Json = Record<string, unknown>;
type Held = { -readonly [K in keyof ChargingProfileRequestRecord]: ChargingProfileRequestRecord[K] } & { deadline?: number; result: Json | null; lateResult: Json | null };

const REQUEST_ID = /^[0-9a-f-]{36}$/i;

export function inMemoryChargingProfileStore(deliveries: Pick<InMemoryDeliveryStore, 'enqueued'>, options: { now?: () => number } = {}): ChargingProfileStore {
  const now = options.now ?? Date.now;
  const requests = new Map<string, Held>();
  const record = (r: Held): ChargingProfileRequestRecord => ({ id: r.id, operation: r.operation, sessionId: r.sessionId, emsp: r.emsp, cpo: r.cpo, responseUrl: r.responseUrl, state: r.state, correlationId: r.correlationId });
  const sessions = () => deliveries.enqueued.filter((d) => d.kind === 'session' && !d.patch);
  const distinct = (parties: Array<{ countryCode: string; partyId: string }>) => [...new Map(parties.map((p) => [`${p.countryCode}/${p.partyId}`, p])).values()];
  return {
    async create(r) {
      if (requests.has(r.id)) throw new Error(`request ${r.id} exists`);
      requests.set(r.id, { ...r, state: 'requested', result: null, lateResult: null });
    },
    async answered(id, accepted, timeoutSeconds, graceSeconds) {
      const r = requests.get(id);
      if (!r || r.state !== 'requested') return;
      r.state = accepted ? 'accepted' : 'rejected';
      r.deadline = now() + (timeoutSeconds + graceSeconds) * 1000;
    },
    async result(id, result) {
      const r = REQUEST_ID.test(id) ? requests.get(id) : undefined;
      if (r && (r.state === 'requested' || r.state === 'accepted')) {
        r.state = 'result';
        r.result = result;
        return { outcome: 'forward', request: record(r) };
      }
      if (r && r.state === 'timed_out' && r.lateResult === null) {
        r.lateResult = result;
        return { outcome: 'late', request: record(r) };
      }
      return { outcome: 'unknown' };
    },
    async expire() {
      const expired = [...requests.values()].filter((r) => r.state === 'accepted' && r.deadline !== undefined && r.deadline < now());
      for (const r of expired) r.state = 'timed_out';
      return expired.map(record);
    },
    async sessionCpos(emsp, sessionId) {
      return distinct(sessions().filter((d) => d.emsp.countryCode === emsp.countryCode && d.emsp.partyId === emsp.partyId && d.objectId.toUpperCase() === sessionId.toUpperCase()).map((d) => d.cpo));
    },
    async sessionEmsps(cpo, sessionId) {
      return distinct(sessions().filter((d) => d.cpo.countryCode === cpo.countryCode && d.cpo.partyId === cpo.partyId && d.objectId.toUpperCase() === sessionId.toUpperCase()).map((d) => d.emsp));
    },
    async get(id) {
      const r = REQUEST_ID.test(id) ? requests.get(id) : undefined;
      return r && { ...record(r), result: r.result, lateResult: r.lateResult };
    },
  };
}
