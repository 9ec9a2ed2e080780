import { locationEventTypes } from '@hub/events';
import type { ObjectPath } from '@hub/core';
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
      return withEvse(stored, path.evseUid ?? '', (evse) => putOrPatch(evse, data, isPut, 'unknown EVSE'));
    }
    case locationEventTypes.connectorPut:
    case locationEventTypes.connectorPatched: {
      if (!stored) return rejected('unknown location');
      const isPut = type === locationEventTypes.connectorPut;
      const connectorId = path.connectorId ?? '';
      return withEvse(stored, path.evseUid ?? '', (evse) => (evse ? withConnector(evse, connectorId, (c) => putOrPatch(c, data, isPut, 'unknown connector')) : rejected('unknown EVSE')));
    }
    default:
      return unknownEventType(type);
  }
}

/** The EVSE or Connector at a path inside a stored Location, for detail GETs. */
export function findInLocation(location: Json, path: ObjectPath): Json | undefined {
  if (!path.evseUid) return location;
  const evseUid = path.evseUid;
  const evse = evsesOf(location).find((e) => sameId(e['uid'], evseUid));
  const connectorId = path.connectorId;
  if (!evse || connectorId === undefined) return evse;
  return connectorsOf(evse).find((c) => sameId(c['id'], connectorId));
}
