import { isoInstant } from '@hub/ocpi';
import { mergePatch } from '@hub/core';

// How a PUT or PATCH of an OCPI object changes what the hub holds, whichever module it belongs to:
// newest wins (docs/decisions/0001-newest-state-wins.md). Pure functions: the projector runs them inside
// its transaction, the tests run them alone.

export type Json = Record<string, unknown>;

export type ApplyResult =
  | { readonly kind: 'upsert'; readonly document: Json }
  | { readonly kind: 'deleted' }
  | { readonly kind: 'rejected'; readonly reason: string }
  /** Newest wins (docs/decisions/0001-newest-state-wins.md): older than what the hub holds, not applied. */
  | { readonly kind: 'superseded'; readonly reason: string };

/** Why a change to an object or a part of it is not applied. */
export type NotApplied = Extract<ApplyResult, { kind: 'rejected' | 'superseded' }>;
export const rejected = (reason: string): NotApplied => ({ kind: 'rejected', reason });
export const unknownEventType = (type: string): NotApplied => rejected(`unknown event type ${type}`);

export function lastUpdated(o: Json): string {
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
export function later(a: string, b: string): string {
  const x = isoInstant(a);
  const y = isoInstant(b);
  if (x === undefined) return b || a;
  if (y === undefined) return a;
  return y > x ? b : a;
}

/** A part of an object (the object itself, an EVSE, a Connector) after a change, or why it did not change. */
export type Change = { readonly kind: 'changed'; readonly part: Json } | NotApplied;

/** A PUT replaces the part, a PATCH merges into it; either only when not older than the part held. */
export function putOrPatch(held: Json | undefined, data: Json, isPut: boolean, unknown: string): Change {
  const superseded = supersededBy(held, data);
  if (superseded) return superseded;
  if (isPut) return { kind: 'changed', part: data };
  return held ? { kind: 'changed', part: mergePatch(held, data) } : rejected(unknown);
}

export const asResult = (change: Change): ApplyResult => (change.kind === 'changed' ? { kind: 'upsert', document: change.part } : change);
