// Events of the locations and tariffs topics. The record value is the OCPI object or patch exactly as
// the CPO pushed and the hub validated it; the subject carries the path (country_code/party_id/
// location_id[/evse_uid[/connector_id]], each segment URI-encoded), so a consumer needs nothing else.

export const locationEventTypes = {
  locationPut: 'ocpi.locations.location-put.v1',
  locationPatched: 'ocpi.locations.location-patched.v1',
  evsePut: 'ocpi.locations.evse-put.v1',
  evsePatched: 'ocpi.locations.evse-patched.v1',
  connectorPut: 'ocpi.locations.connector-put.v1',
  connectorPatched: 'ocpi.locations.connector-patched.v1',
} as const;

export const tariffEventTypes = {
  tariffPut: 'ocpi.tariffs.tariff-put.v1',
  /** mod_tariffs.asciidoc, Receiver interface, DELETE: the value is {}. */
  tariffDeleted: 'ocpi.tariffs.tariff-deleted.v1',
} as const;

/**
 * Sessions topic: the full Session as pushed (PUT; ocpi-to names the eMSP), or the partial Session
 * as patched (PATCH; merged by the dispatcher into the session it holds); subject cc/pid/session_id.
 */
export const sessionEventTypes = {
  sessionPut: 'ocpi.sessions.session-put.v1',
  sessionPatched: 'ocpi.sessions.session-patched.v1',
} as const;

/** CDRs topic (the analytics contract, README): the CDR as posted; subject cc/pid/cdr_id. */
export const cdrEventTypes = {
  cdrPosted: 'ocpi.cdrs.cdr-posted.v1',
} as const;

export interface ObjectPath {
  readonly countryCode: string;
  readonly partyId: string;
  readonly id: string;
  readonly evseUid?: string;
  readonly connectorId?: string;
}

/** CiString (types.asciidoc): country code and party id compare case-insensitively; stored upper-case. */
export function pathSubject(p: ObjectPath): string {
  return [p.countryCode.toUpperCase(), p.partyId.toUpperCase(), p.id, p.evseUid, p.connectorId]
    .filter((s): s is string => s !== undefined)
    .map(encodeURIComponent)
    .join('/');
}

export function parseSubject(subject: string): ObjectPath | undefined {
  let parts: string[];
  try {
    parts = subject.split('/').map(decodeURIComponent);
  } catch {
    return undefined; // a broken %-sequence: not a subject this hub wrote
  }
  const [countryCode, partyId, id, evseUid, connectorId] = parts;
  if (!countryCode || !partyId || !id || parts.length > 5) return undefined;
  return { countryCode, partyId, id, ...(evseUid ? { evseUid } : {}), ...(connectorId ? { connectorId } : {}) };
}

/**
 * Kafka key of every event about one location (or tariff): all its events share a partition. Ids are
 * CiStrings (types.asciidoc), so the key is upper-cased: `loc1` and `LOC1` are one object, in order.
 */
export function objectKey(p: ObjectPath): string {
  return `${p.countryCode.toUpperCase()}/${p.partyId.toUpperCase()}/${p.id.toUpperCase()}`;
}

/** Whether two CiString ids (types.asciidoc: case-insensitive) name the same object. */
export function sameId(a: unknown, b: string): boolean {
  return typeof a === 'string' && a.toUpperCase() === b.toUpperCase();
}
