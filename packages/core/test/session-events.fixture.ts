// Sessions and their PUT and PATCH events as the dispatcher hands them to the delivery store, shared
// by the session fold's unit test and the store's session PATCH integration test.
import type { DeliveryInput } from '../src/delivery-records.ts';

type Json = Record<string, unknown>;
export const emsp = { countryCode: 'NL', partyId: 'EMS' };
export const cpo = { countryCode: 'NL', partyId: 'CPO' };
/** What the dispatcher reads as the eMSP of a PATCH event without cdr_token. */
export const unknownEmsp = { countryCode: '??', partyId: '???' };

/** The fields of a Session the fold and the store look at (the rest does not change their work). */
export const fullSession = (id: string, lastUpdated: string, extra: Json = {}): Json => ({
  id,
  kwh: 0,
  status: 'ACTIVE',
  cdr_token: { country_code: 'NL', party_id: 'EMS', uid: 'U1', type: 'RFID', contract_id: 'C1' },
  last_updated: lastUpdated,
  ...extra,
});

/** A session PUT event at an offset of partition 0. */
export const sessionPut = (id: string, offset: number, payload: Json): DeliveryInput => ({
  kind: 'session',
  emsp,
  cpo,
  objectId: id,
  partition: 0,
  offset: String(offset),
  payload,
  correlationId: `put-${offset}`,
  eventTime: '2026-01-01T00:00:00Z',
});

/** A session PATCH event as the dispatcher reads it: no cdr_token, so no eMSP. */
export const sessionPatch = (id: string, offset: number, payload: Json): DeliveryInput => ({ ...sessionPut(id, offset, payload), emsp: unknownEmsp, correlationId: `patch-${offset}`, patch: true });
