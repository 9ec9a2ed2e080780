import { locationEventTypes } from '@hub/events';
import { HUB_VERSION_FIELDS, mergeVersionFields, versionFieldsAt, versionFieldsUnder, type ObjectPath, type VersionFieldsByVersion } from '@hub/core';
import { sameId } from '../object-events.ts';
import { asResult, later, lastUpdated, putOrPatch, rejected, unknownEventType, type ApplyResult, type Change, type Json } from '../newest-wins.ts';

// How an event changes the stored Location (OCPI 2.2.1 mod_locations.asciidoc, Receiver interface PUT
// and PATCH at each level). Pure: the projector runs it inside its transaction, the tests run it alone.

const evsesOf = (location: Json): Json[] => (Array.isArray(location['evses']) ? (location['evses'] as Json[]) : []);
const connectorsOf = (evse: Json): Json[] => (Array.isArray(evse['connectors']) ? (evse['connectors'] as Json[]) : []);

/**
 * A change to an EVSE or Connector also sets its parents' last_updated to the child's new value
 * (mod_locations.asciidoc, PUT and PATCH Method: "the Receiver SHALL also set the new last_updated
 * value on the parent EVSE and Location Objects"), never to an earlier one than the parent holds: a
 * parent's last_updated is when it "or one of its EVSEs or Connectors were last updated" (Location and
 * EVSE objects).
 */
function withEvse(location: Json, evseUid: string, change: (evse: Json | undefined) => Change): ApplyResult {
  const evses = evsesOf(location);
  const index = evses.findIndex((e) => sameId(e['uid'], evseUid));
  const changed = change(index >= 0 ? evses[index] : undefined);
  if (changed.kind !== 'changed') return changed;
  const next = changed.part;
  const updated = index >= 0 ? evses.map((e, i) => (i === index ? next : e)) : [...evses, next];
  return { kind: 'upsert', document: { ...location, evses: updated, last_updated: later(lastUpdated(location), lastUpdated(next)) } };
}

function withConnector(evse: Json, connectorId: string, change: (connector: Json | undefined) => Change): Change {
  const connectors = connectorsOf(evse);
  const index = connectors.findIndex((c) => sameId(c['id'], connectorId));
  const changed = change(index >= 0 ? connectors[index] : undefined);
  if (changed.kind !== 'changed') return changed;
  const next = changed.part;
  const updated = index >= 0 ? connectors.map((c, i) => (i === index ? next : c)) : [...connectors, next];
  return { kind: 'changed', part: { ...evse, connectors: updated, last_updated: later(lastUpdated(evse), lastUpdated(next)) } };
}

/** An object without the hub-private member, and that member. */
function ownFields(object: Json): [Json, VersionFieldsByVersion | undefined] {
  if (!(HUB_VERSION_FIELDS in object)) return [object, undefined];
  const { [HUB_VERSION_FIELDS]: fields, ...rest } = object;
  return [rest, fields as VersionFieldsByVersion | undefined];
}

const bare = (object: Json | undefined): Json | undefined => object && ownFields(object)[0];

/** The EVSE or Connector at `path` inside the Location, and its dotted path there by the ids it holds (v2.3.0's locationOut reads them so). */
function childAt(location: Json, path: ObjectPath): { readonly child: Json; readonly at: string } | undefined {
  const evse = evsesOf(location).find((e) => sameId(e['uid'], path.evseUid ?? ''));
  if (!evse) return undefined;
  const evseAt = `evses.${String(evse['uid'])}`;
  if (path.connectorId === undefined) return { child: evse, at: evseAt };
  const connector = connectorsOf(evse).find((c) => sameId(c['id'], path.connectorId ?? ''));
  return connector && { child: connector, at: `${evseAt}.connectors.${String(connector['id'])}` };
}

/**
 * What a partner of another version sent for an EVSE or Connector that 2.2.1 has no field for (a 2.3.0
 * EVSE's parking) is kept in the Location's hub-private member under the child's path, as a Location
 * PUT keeps its EVSEs' (packages/versions/src/v2.3.0/index.ts): serializers remove only a top-level
 * member, so one inside evses[] would reach 2.2.1 and 2.1.1 readers, and the Location's 2.3.0 readers
 * would not find it. A PUT replaces what was kept of the child; a PATCH merges (mergeVersionFields).
 */
function withChildFields(result: ApplyResult, before: Json, path: ObjectPath, fields: VersionFieldsByVersion | undefined, isPut: boolean): ApplyResult {
  if (result.kind !== 'upsert') return result;
  const [location, held] = ownFields(result.document);
  // Nothing kept, nothing sent: a 2.2.1 CPO's Location, the projector's hot path.
  if (!fields && !held) return result;
  const at = childAt(location, path)?.at;
  if (!at) return result;
  let kept = held;
  // Ids are CiStrings (types.asciidoc): a child PUT as "e1" after "E1" keeps what was kept of it under its new spelling.
  const was = childAt(before, path)?.at;
  if (was && was !== at) kept = mergeVersionFields(mergeVersionFields(kept, clearedAt(kept, was)), versionFieldsAt(versionFieldsUnder(kept, was), at));
  if (isPut) kept = mergeVersionFields(kept, clearedAt(kept, at));
  kept = mergeVersionFields(kept, versionFieldsAt(fields, at));
  if (kept === held) return result;
  return { kind: 'upsert', document: kept ? { ...location, [HUB_VERSION_FIELDS]: kept } : location };
}

/** A PATCH of the member removing what is kept under `at`, for every version that keeps anything. */
function clearedAt(fields: VersionFieldsByVersion | undefined, at: string): VersionFieldsByVersion | undefined {
  return fields && (Object.fromEntries(Object.keys(fields).map((version) => [version, { kept: { [at]: null }, derived: { [at]: null } }])));
}

export function applyLocationEvent(stored: Json | undefined, type: string, path: ObjectPath, data: Json): ApplyResult {
  switch (type) {
    case locationEventTypes.locationPut:
    case locationEventTypes.locationPatched: {
      return asResult(putOrPatch(stored, data, type === locationEventTypes.locationPut, 'unknown location'));
    }
    case locationEventTypes.evsePut:
    case locationEventTypes.evsePatched: {
      if (!stored) return rejected('unknown location');
      const isPut = type === locationEventTypes.evsePut;
      const [evseData, fields] = ownFields(data);
      return withChildFields(withEvse(stored, path.evseUid ?? '', (evse) => putOrPatch(bare(evse), evseData, isPut, 'unknown EVSE')), stored, path, fields, isPut);
    }
    case locationEventTypes.connectorPut:
    case locationEventTypes.connectorPatched: {
      if (!stored) return rejected('unknown location');
      const isPut = type === locationEventTypes.connectorPut;
      const connectorId = path.connectorId ?? '';
      const [connectorData, fields] = ownFields(data);
      const result = withEvse(stored, path.evseUid ?? '', (evse) => (evse ? withConnector(evse, connectorId, (c) => putOrPatch(bare(c), connectorData, isPut, 'unknown connector')) : rejected('unknown EVSE')));
      return withChildFields(result, stored, path, fields, isPut);
    }
    default:
      return unknownEventType(type);
  }
}

/**
 * The EVSE or Connector at a path inside a stored Location, for detail GETs, with what was kept of it
 * in the Location's hub-private member as its own (withChildFields), for a reader of its sender's version.
 */
export function findInLocation(location: Json, path: ObjectPath): Json | undefined {
  if (!path.evseUid) return location;
  const found = childAt(location, path);
  const held = location[HUB_VERSION_FIELDS] as VersionFieldsByVersion | undefined;
  const fields = found && held && versionFieldsUnder(held, found.at);
  return fields ? { ...found.child, [HUB_VERSION_FIELDS]: fields } : found?.child;
}
