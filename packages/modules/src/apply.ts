import { locationEventTypes, tariffEventTypes, tokenEventTypes } from '@hub/events';
import { isoInstant } from '@hub/ocpi';
import { sameId } from './location-events.ts';
import { mergePatch, type ObjectPath } from '@hub/core';

// How an event changes the stored Location or Tariff (OCPI 2.2.1 mod_locations.asciidoc, Receiver
// interface PUT and PATCH; mod_tariffs.asciidoc, PUT). Pure functions: the projector runs them inside
// its transaction, the tests run them alone.

type Json = Record<string, unknown>;

export type ApplyResult =
  | { readonly kind: 'upsert'; readonly document: Json }
  | { readonly kind: 'deleted' }
  | { readonly kind: 'rejected'; readonly reason: string }
  /** Newest wins (docs/decisions/0001-newest-state-wins.md): older than what the hub holds, not applied. */
  | { readonly kind: 'superseded'; readonly reason: string };

/** Why a change to a part of a Location is not applied. */
type NotApplied = Extract<ApplyResult, { kind: 'rejected' | 'superseded' }>;
const rejected = (reason: string): NotApplied => ({ kind: 'rejected', reason });

const evsesOf = (location: Json): Json[] => (Array.isArray(location['evses']) ? (location['evses'] as Json[]) : []);
const connectorsOf = (evse: Json): Json[] => (Array.isArray(evse['connectors']) ? (evse['connectors'] as Json[]) : []);

function lastUpdated(o: Json): string {
  return typeof o['last_updated'] === 'string' ? o['last_updated'] : '';
}

const instantOf = (o: Json): number | undefined => isoInstant(lastUpdated(o));

/**
 * Newest wins (docs/decisions/0001-newest-state-wins.md): an update whose last_updated is older than
 * that of the object it writes, as the hub holds it, is superseded. Equal times apply, in log order;
 * so does an update when either time is unreadable (the schema layer refuses such a push, but another
 * producer's event may carry anything). A PUT or PATCH carries the object's last_updated (types and
 * PATCH Method of mod_locations.asciidoc, mod_tariffs.asciidoc, mod_tokens.asciidoc).
 */
export function supersededBy(held: Json | undefined, update: Json): NotApplied | undefined {
  if (!held) return undefined;
  const incoming = instantOf(update);
  const stored = instantOf(held);
  if (incoming === undefined || stored === undefined || incoming >= stored) return undefined;
  return { kind: 'superseded', reason: `last_updated ${lastUpdated(update)} is older than the ${lastUpdated(held)} held` };
}

/** The later of two last_updated values (a parent's must not move back when an older child is added). */
function later(a: string, b: string): string {
  const x = isoInstant(a);
  const y = isoInstant(b);
  if (x === undefined) return b || a;
  if (y === undefined) return a;
  return y > x ? b : a;
}

/** A part of an object (the object itself, an EVSE, a Connector) after a change, or why it did not change. */
type Change = { readonly kind: 'changed'; readonly part: Json } | NotApplied;

/** A PUT replaces the part, a PATCH merges into it; either only when not older than the part held. */
function putOrPatch(held: Json | undefined, data: Json, isPut: boolean, unknown: string): Change {
  const superseded = supersededBy(held, data);
  if (superseded) return superseded;
  if (isPut) return { kind: 'changed', part: data };
  return held ? { kind: 'changed', part: mergePatch(held, data) } : rejected(unknown);
}

const asResult = (change: Change): ApplyResult => (change.kind === 'changed' ? { kind: 'upsert', document: change.part } : change);

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
      return { kind: 'rejected', reason: `unknown event type ${type}` };
  }
}

export function applyTariffEvent(stored: Json | undefined, type: string, data: Json): ApplyResult {
  switch (type) {
    case tariffEventTypes.tariffPut:
      return supersededBy(stored, data) ?? { kind: 'upsert', document: data };
    // A DELETE carries no last_updated (mod_tariffs.asciidoc, DELETE Method): it applies in log order.
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
    case tokenEventTypes.tokenPatched: {
      return asResult(putOrPatch(stored, data, type === tokenEventTypes.tokenPut, 'unknown token'));
    }
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
