import { locationEventTypes, tariffEventTypes, tokenEventTypes } from '@hub/events';
import { sameId, type ObjectPath } from './location-events.ts';
import { mergePatch } from './merge-patch.ts';

// How an event changes the stored Location or Tariff (OCPI 2.2.1 mod_locations.asciidoc, Receiver
// interface PUT and PATCH; mod_tariffs.asciidoc, PUT). Pure functions: the projector runs them inside
// its transaction, the tests run them alone.

type Json = Record<string, unknown>;

export type ApplyResult =
  | { readonly kind: 'upsert'; readonly document: Json }
  | { readonly kind: 'deleted' }
  | { readonly kind: 'rejected'; readonly reason: string };

const evsesOf = (location: Json): Json[] => (Array.isArray(location['evses']) ? (location['evses'] as Json[]) : []);
const connectorsOf = (evse: Json): Json[] => (Array.isArray(evse['connectors']) ? (evse['connectors'] as Json[]) : []);

function lastUpdated(o: Json): string {
  return typeof o['last_updated'] === 'string' ? o['last_updated'] : '';
}

/**
 * A change to an EVSE or Connector also sets its parents' last_updated to the child's new value
 * (mod_locations.asciidoc, PUT and PATCH Method).
 */
function withEvse(location: Json, evseUid: string, change: (evse: Json | undefined) => Json | string): ApplyResult {
  const evses = evsesOf(location);
  const index = evses.findIndex((e) => sameId(e['uid'], evseUid));
  const next = change(index >= 0 ? evses[index] : undefined);
  if (typeof next === 'string') return { kind: 'rejected', reason: next };
  const updated = index >= 0 ? evses.map((e, i) => (i === index ? next : e)) : [...evses, next];
  return { kind: 'upsert', document: { ...location, evses: updated, last_updated: lastUpdated(next) || lastUpdated(location) } };
}

function withConnector(evse: Json, connectorId: string, change: (connector: Json | undefined) => Json | string): Json | string {
  const connectors = connectorsOf(evse);
  const index = connectors.findIndex((c) => sameId(c['id'], connectorId));
  const next = change(index >= 0 ? connectors[index] : undefined);
  if (typeof next === 'string') return next;
  const updated = index >= 0 ? connectors.map((c, i) => (i === index ? next : c)) : [...connectors, next];
  return { ...evse, connectors: updated, last_updated: lastUpdated(next) || lastUpdated(evse) };
}

export function applyLocationEvent(stored: Json | undefined, type: string, path: ObjectPath, data: Json): ApplyResult {
  switch (type) {
    case locationEventTypes.locationPut:
      return { kind: 'upsert', document: data };
    case locationEventTypes.locationPatched:
      return stored ? { kind: 'upsert', document: mergePatch(stored, data) } : { kind: 'rejected', reason: 'unknown location' };
    case locationEventTypes.evsePut:
    case locationEventTypes.evsePatched: {
      if (!stored) return { kind: 'rejected', reason: 'unknown location' };
      const uid = path.evseUid ?? '';
      const isPut = type === locationEventTypes.evsePut;
      return withEvse(stored, uid, (evse) => (isPut ? data : evse ? mergePatch(evse, data) : 'unknown EVSE'));
    }
    case locationEventTypes.connectorPut:
    case locationEventTypes.connectorPatched: {
      if (!stored) return { kind: 'rejected', reason: 'unknown location' };
      const isPut = type === locationEventTypes.connectorPut;
      const connectorId = path.connectorId ?? '';
      return withEvse(stored, path.evseUid ?? '', (evse) =>
        evse ? withConnector(evse, connectorId, (c) => (isPut ? data : c ? mergePatch(c, data) : 'unknown connector')) : 'unknown EVSE',
      );
    }
    default:
      return { kind: 'rejected', reason: `unknown event type ${type}` };
  }
}

export function applyTariffEvent(stored: Json | undefined, type: string, data: Json): ApplyResult {
  switch (type) {
    case tariffEventTypes.tariffPut:
      return { kind: 'upsert', document: data };
    case tariffEventTypes.tariffDeleted:
      return stored ? { kind: 'deleted' } : { kind: 'rejected', reason: 'unknown tariff' };
    default:
      return { kind: 'rejected', reason: `unknown event type ${type}` };
  }
}

/** mod_tokens.asciidoc, Receiver interface: PUT replaces, PATCH merges into a token the hub holds. */
export function applyTokenEvent(stored: Json | undefined, type: string, data: Json): ApplyResult {
  switch (type) {
    case tokenEventTypes.tokenPut:
      return { kind: 'upsert', document: data };
    case tokenEventTypes.tokenPatched:
      return stored ? { kind: 'upsert', document: mergePatch(stored, data) } : { kind: 'rejected', reason: 'unknown token' };
    default:
      return { kind: 'rejected', reason: `unknown event type ${type}` };
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
