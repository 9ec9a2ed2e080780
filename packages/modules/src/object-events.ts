// The subject and key of an OCPI object event: its path, and the Kafka key that keeps every event of
// one object on one partition.

import type { ObjectPath } from '@hub/core';

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

/** A string member of an object document, or undefined (another producer's event may carry anything). */
export function stringMember(document: Record<string, unknown>, name: string): string | undefined {
  const value = document[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The member at `path` of an event's object (a delivery rule's Location id, a personal-data rule's
 * driver token), or undefined where a step is missing or not an object: another platform's event may
 * carry anything there.
 */
export function memberAt(value: unknown, path: readonly string[]): unknown {
  return path.reduce<unknown>((at, step) => (typeof at === 'object' && at !== null && !Array.isArray(at) ? (at as Record<string, unknown>)[step] : undefined), value);
}
