import { createHash, randomUUID } from 'node:crypto';

// Event envelope: CloudEvents 1.0 in Kafka binary mode (reference design, Event envelope). Attributes
// travel as ce_* headers; the record value is the payload exactly as validated, so a consumer reads
// plain JSON. Correlation and request ids and the from/to parties travel as headers as well.

export interface HubEvent<T = unknown> {
  /** ce_id: unique per event; consumers use it to drop duplicates. */
  readonly id: string;
  /** ce_type, e.g. hub.registry.party-registered.v1 */
  readonly type: string;
  /** ce_source: the service that appended it. */
  readonly source: string;
  /** ce_subject: the object, e.g. NL/ABC/CPO or NL/ABC/LOC1 */
  readonly subject: string;
  /** ce_time: ISO 8601 UTC with milliseconds. */
  readonly time: string;
  /** Kafka record key: decides the partition, hence the order per object. */
  readonly key: string;
  readonly data: T;
  readonly correlationId?: string;
  readonly requestId?: string;
  /** OCPI-from / OCPI-to as "CC/PID". */
  readonly from?: string;
  readonly to?: string;
  /**
   * Header hub-sealed-driver-data: a driver's personal fields sealed under the token's data key, as
   * "<key_id>.<base64>" (docs/decisions/0013-erasure-by-destroying-data-keys.md). A header, not a
   * member of the value, so the value stays exactly the OCPI object its schema describes.
   */
  readonly sealedDriverData?: string;
  /**
   * Header hub-change-position, on snapshot records only: "<partition>:<offset>", the change topic's
   * next offset whose state this record holds, or "<partition>:<offset>,..." over every partition
   * when written from the read model (docs/decisions/0014-snapshot-topics.md).
   */
  readonly changePosition?: string;
}

/** The record header that carries HubEvent.changePosition. */
export const CHANGE_POSITION_HEADER = 'hub-change-position';

/** The record header that carries HubEvent.sealedDriverData. */
export const SEALED_DRIVER_DATA_HEADER = 'hub-sealed-driver-data';

/**
 * A UUID (RFC 9562 version 8: custom) derived from a name: the same name always gives the same id.
 * For events that may be appended twice for one fact (a CDR the CPO posts again after a timeout), so
 * the two records carry one ce_id and a consumer that dedupes on it counts the fact once.
 */
export function eventIdFor(name: string): string {
  const bytes = createHash('sha256').update(name).digest().subarray(0, 16);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x80;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function newEvent<T>(fields: Omit<HubEvent<T>, 'id' | 'time'> & { id?: string; time?: string }): HubEvent<T> {
  return { id: randomUUID(), time: new Date().toISOString(), ...fields };
}

// The JSON of an event's data, kept per event once something measured it: an event is immutable, so
// the projector's snapshot chunking (which needs each record's size) and the appender (which sends
// it) serialize a whole location once, not twice.
const recordValues = new WeakMap<HubEvent, string>();

/** The Kafka record value of an event: its data as JSON, null for a tombstone (docs/decisions/0014-snapshot-topics.md). */
export function recordValue(event: HubEvent): string | null {
  if (event.data === null) return null;
  return recordValues.get(event) ?? JSON.stringify(event.data);
}

/** The length of recordValue(event) in UTF-16 units (0 for a tombstone), kept for the append that follows. */
export function recordValueLength(event: HubEvent): number {
  if (event.data === null || event.data === undefined) return 0;
  let value = recordValues.get(event);
  if (value === undefined) {
    value = JSON.stringify(event.data);
    recordValues.set(event, value);
  }
  return value.length;
}

export function eventHeaders(event: HubEvent): Record<string, string> {
  const headers: Record<string, string> = {
    ce_specversion: '1.0',
    ce_id: event.id,
    ce_type: event.type,
    ce_source: event.source,
    ce_subject: event.subject,
    ce_time: event.time,
    'content-type': 'application/json',
  };
  if (event.correlationId) headers['x-correlation-id'] = event.correlationId;
  if (event.requestId) headers['x-request-id'] = event.requestId;
  if (event.from) headers['ocpi-from'] = event.from;
  if (event.to) headers['ocpi-to'] = event.to;
  if (event.sealedDriverData) headers[SEALED_DRIVER_DATA_HEADER] = event.sealedDriverData;
  if (event.changePosition) headers[CHANGE_POSITION_HEADER] = event.changePosition;
  return headers;
}

/** Rebuilds an event from a record's headers and value; undefined when the record is not a CloudEvent. */
export function eventFromRecord(
  key: string,
  headers: Readonly<Record<string, string | undefined>>,
  value: string,
): HubEvent | undefined {
  const { ce_id: id, ce_type: type, ce_source: source, ce_subject: subject, ce_time: time } = headers;
  if (!id || !type || !source || !time) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(value);
  } catch {
    return undefined;
  }
  const event: { -readonly [K in keyof HubEvent]: HubEvent[K] } = { id, type, source, subject: subject ?? key, time, key, data };
  if (headers['x-correlation-id']) event.correlationId = headers['x-correlation-id'];
  if (headers['x-request-id']) event.requestId = headers['x-request-id'];
  if (headers['ocpi-from']) event.from = headers['ocpi-from'];
  if (headers['ocpi-to']) event.to = headers['ocpi-to'];
  if (headers[SEALED_DRIVER_DATA_HEADER]) event.sealedDriverData = headers[SEALED_DRIVER_DATA_HEADER];
  if (headers[CHANGE_POSITION_HEADER]) event.changePosition = headers[CHANGE_POSITION_HEADER];
  return event;
}
