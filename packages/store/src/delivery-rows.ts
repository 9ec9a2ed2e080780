import type { Delivery, DeliveryFilter, DeliveryKind, DeliveryState } from '@hub/core';

// The deliveries table's rows (migrations 005 and 018) and the SQL that selects them by a filter: the
// Postgres side of the delivery records (@hub/core, delivery-records.ts).

type Json = Record<string, unknown>;

export interface Row {
  id: string;
  kind: DeliveryKind;
  emsp_country_code: string;
  emsp_party_id: string;
  cpo_country_code: string;
  cpo_party_id: string;
  object_id: string;
  source_offset: string;
  payload: Json;
  correlation_id: string | null;
  event_time: Date;
  state: DeliveryState;
  reason: string | null;
  attempts: number;
  next_attempt_at: Date;
  last_error: string | null;
  created_at: Date;
  target_url: string | null;
  recipient_role: 'EMSP' | 'CPO';
  from_hub: boolean;
}

export const toDelivery = (r: Row): Delivery => ({
  id: r.id,
  kind: r.kind,
  emsp: { countryCode: r.emsp_country_code, partyId: r.emsp_party_id },
  cpo: { countryCode: r.cpo_country_code, partyId: r.cpo_party_id },
  objectId: r.object_id,
  offset: r.source_offset,
  payload: r.payload,
  correlationId: r.correlation_id ?? undefined,
  eventTime: r.event_time,
  state: r.state,
  reason: r.reason ?? undefined,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at,
  lastError: r.last_error ?? undefined,
  createdAt: r.created_at,
  targetUrl: r.target_url ?? undefined,
  recipientRole: r.recipient_role,
  fromHub: r.from_hub,
});

export function where(filter: DeliveryFilter, params: unknown[]): string {
  const clauses: string[] = [];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    clauses.push(sql.replace('?', `$${params.length}`));
  };
  if (filter.id) add('id = ?', filter.id);
  if (filter.states?.length) add('state = any(?)', filter.states);
  if (filter.emsp) {
    add('emsp_country_code = ?', filter.emsp.countryCode);
    add('emsp_party_id = ?', filter.emsp.partyId);
  }
  if (filter.cpo) {
    add('cpo_country_code = ?', filter.cpo.countryCode);
    add('cpo_party_id = ?', filter.cpo.partyId);
  }
  if (filter.recipient) {
    add(`${RECIPIENT_CC} = ?`, filter.recipient.countryCode);
    add(`${RECIPIENT_PID} = ?`, filter.recipient.partyId);
  }
  if (filter.kinds?.length) add('kind = any(?)', filter.kinds);
  if (filter.reason) add("coalesce(reason, last_error, '') ilike ?", `%${filter.reason}%`);
  if (filter.olderThanSeconds !== undefined) add("created_at < now() - (? * interval '1 second')", filter.olderThanSeconds);
  return clauses.length ? `where ${clauses.join(' and ')}` : '';
}

export const DELIVERIES_CHANNEL = 'hub_deliveries';

/**
 * The receiving party's columns of a delivery row (migration 018): the expressions of the index
 * deliveries_pending_recipient, which every query by recipient must repeat exactly.
 */
export const RECIPIENT_CC = "(case when recipient_role = 'CPO' then cpo_country_code else emsp_country_code end)";
export const RECIPIENT_PID = "(case when recipient_role = 'CPO' then cpo_party_id else emsp_party_id end)";
