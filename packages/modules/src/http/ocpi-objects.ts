import type { Request, RequestHandler } from 'express';
import { newEvent } from '@hub/events';
import { HubError, partyKey, sameParty } from '@hub/ocpi';
import { objectKey, ocpiModules, pathSubject } from '../index.ts';
import type { ObjectPath, ProjectionWait, ReadModel, ReadModelStore } from '@hub/core';
export type { ProjectionWait };
import { describeViolations, type SchemaValidator } from '@hub/schemas';
import type { EventAppender } from './ports.ts';
import type { OcpiBodies } from '@hub/schemas/generated/ocpi-bodies';

// What the location and tariff routes share: path checks, ownership, schema validation, the event
// append, and waiting for the projection (read-your-writes).

type Json = Record<string, unknown>;

const COUNTRY = /^[A-Za-z]{2}$/;
const PARTY = /^[A-Za-z0-9]{3}$/;
const PRINTABLE = /^[\x21-\x7e]+$/;

/**
 * Path segments as OCPI defines them (CiString(2), CiString(3), CiString(36)); country/party
 * upper-cased. `idParameter` is the OCPI name of the object's id in the route (location_id,
 * tariff_id, session_id, cdr_id, token_uid); a location's EVSE and connector are evse_uid and
 * connector_id. A CDR id may be 39 long (mod_cdrs.asciidoc, CDR Object: credit CDRs add a suffix).
 */
export function objectPath(req: Request, idParameter: string, maxIdLength = 36): ObjectPath {
  const params = req.params as Record<string, string | undefined>;
  const { country_code: cc = '', party_id: pid = '', evse_uid: evseUid, connector_id: connectorId } = params;
  const id = params[idParameter] ?? '';
  if (!COUNTRY.test(cc) || !PARTY.test(pid)) throw new HubError('INVALID_PARAMETERS', { detail: 'country_code must be 2 letters and party_id 3 letters or digits' });
  for (const [name, v] of [['id', id], ['evse_uid', evseUid], ['connector_id', connectorId]] as const) {
    const max = name === 'id' ? maxIdLength : 36;
    if (v !== undefined && (!PRINTABLE.test(v) || v.length > max)) throw new HubError('INVALID_PARAMETERS', { detail: `${name} must be 1 to ${max} printable characters` });
  }
  return {
    countryCode: cc.toUpperCase(),
    partyId: pid.toUpperCase(),
    id,
    ...(evseUid !== undefined ? { evseUid } : {}),
    ...(connectorId !== undefined ? { connectorId } : {}),
  };
}

/**
 * Required identifiers are never empty, in paths either: `/locations/NL/ABC//1` names no
 * location, and would otherwise fall through to the catch-all 404. `names` are the segments in order.
 */
export function refuseEmptySegments(names: readonly string[]): RequestHandler {
  return (req, _res, next) => {
    const segments = req.path.slice(1).split('/');
    // A trailing slash is not a segment (express routes ignore it).
    const empty = segments.findIndex((s, i) => s === '' && i < segments.length - 1);
    if (empty >= 0) throw new HubError('INVALID_PARAMETERS', { detail: `${names[empty] ?? 'a path segment'} in the path must not be empty` });
    next();
  };
}

/**
 * A party pushes only objects of its own parties (credentials.asciidoc: the roles a platform named;
 * transport_and_format.asciidoc, Client Owned Object Push): the path's country_code/party_id must be a
 * non-suspended role of the caller, the module's owner role (a CPO's location, an eMSP's token).
 */
export function requireOwnParty(req: Request, path: ObjectPath, role: 'CPO' | 'EMSP'): void {
  const own = req.caller.parties.some((p) => p.role === role && !p.suspended && sameParty(p, path));
  if (!own) throw new HubError('FOREIGN_PARTY', { detail: `these credentials do not act as ${role === 'CPO' ? 'CPO' : 'eMSP'} ${partyKey(path)}` });
}

export function requireOwnCpo(req: Request, path: ObjectPath): void {
  requireOwnParty(req, path, 'CPO');
}

// The generated type of each body schema (schemas/generated/ocpi-bodies.ts, from the same schemas that
// validate; a new object schema is a new entry without a list kept here).
export type { OcpiBodies };

/** A PATCH body: any top-level member of the object, null removing it; last_updated always there. */
export type OcpiPatch<T> = { [K in keyof T]?: T[K] | null } & { last_updated: string };

/**
 * The body as the schema layer normalized it (schemas/index.ts, Validation: null members of a PUT
 * absent, a PATCH's top-level nulls kept as removals), typed by its schema, or 2001 naming each
 * violation by JSON pointer. Every route that takes an OCPI object validates through here.
 */
export function validateBody<S extends keyof OcpiBodies>(validator: SchemaValidator, schema: S, body: unknown, partial?: false): OcpiBodies[S];
export function validateBody<S extends keyof OcpiBodies>(validator: SchemaValidator, schema: S, body: unknown, partial: true): OcpiPatch<OcpiBodies[S]>;
export function validateBody<S extends keyof OcpiBodies>(validator: SchemaValidator, schema: S, body: unknown, partial: boolean): OcpiBodies[S] | OcpiPatch<OcpiBodies[S]>;
export function validateBody(validator: SchemaValidator, schema: keyof OcpiBodies, body: unknown, partial = false): object {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new HubError('INVALID_PARAMETERS', { detail: 'body must be a JSON object' });
  const { document, violations } = partial ? validator.validatePartial(schema, body) : validator.validate(schema, body);
  if (violations.length > 0) throw new HubError('INVALID_PARAMETERS', { detail: describeViolations(violations), data: violations });
  // mod_locations.asciidoc, PATCH Method: "Any request to the PATCH method SHALL contain the last_updated field".
  if (partial && typeof (document as Json)['last_updated'] !== 'string') throw new HubError('INVALID_PARAMETERS', { detail: '/: required field last_updated missing (a PATCH must contain it)' });
  return document as object;
}

/**
 * An OCPI object as the JSON object the event log and the stores carry. The generated types are
 * interfaces (no index signature), so they are not Records to the compiler: this is the one place
 * that says they are.
 */
export function asJson(document: object): Json {
  return document as Json;
}

/** Ids in the body must be the ids in the path (mod_locations.asciidoc, PUT request parameters). */
export function requireSameIds(body: object, expected: Record<string, string>, caseInsensitive: readonly string[] = ['country_code', 'party_id']): void {
  for (const [field, value] of Object.entries(expected)) {
    const got = asJson(body)[field];
    if (got === undefined) continue;
    const text = typeof got === 'string' ? got : JSON.stringify(got);
    const same = caseInsensitive.includes(field) ? text.toUpperCase() === value.toUpperCase() : text === value;
    if (!same) throw new HubError('INVALID_PARAMETERS', { detail: `${field} in the body ("${text}") differs from the path ("${value}")` });
  }
}


/**
 * Objects known to exist, so a PATCH of a hot object needs no query: on a 2-core machine the saved
 * round trip is a large share of a PATCH's cost.
 * - A location, once seen, exists for good: OCPI has no DELETE for it (mod_locations.asciidoc,
 *   Receiver interface; removal is a status, not an absence).
 * - An EVSE or connector can disappear: a PUT of its location or EVSE, or a PATCH carrying `evses` or
 *   `connectors`, replaces the list it was in. So it is trusted only for childTtlMs, and forgotten at
 *   once when this ingress accepts such a push; for childTtlMs after that, that location's children
 *   are not cached at all (the read model may not show the push yet, and would vouch for a child it
 *   is about to drop). Another replica's push reaches this one's entries when they expire; until then
 *   (and in the read model's own milliseconds of lag) a PATCH of a removed child is accepted and then
 *   kept by the projector as a reject (projection_rejects).
 * - Each child is trusted for a random share of childTtlMs (half to all of it): children checked in
 *   the same moment (a partner's status sweep over its EVSEs) would otherwise all expire in one
 *   moment too and be queried again in one burst, every childTtlMs; at 1,500 PATCH/s over 1,000
 *   locations that burst held the ingress and Postgres for about half a second every 5 s (it
 *   showed in the p99 at the peer's rate), while spread out the same queries cost nothing a partner sees.
 * Bounded; when full it starts over.
 */
export class KnownObjects {
  private readonly locations = new Set<string>();
  /** Per location: its children's subjects and until when they are trusted. */
  private readonly children = new Map<string, Map<string, number>>();
  /** Locations whose children are not cached until the given time (after forgetChildren). */
  private readonly unsettled = new Map<string, number>();
  private entries = 0;
  private readonly max: number;
  private readonly childTtlMs: number;
  private readonly now: () => number;
  private readonly random: () => number;
  constructor(options: { max?: number; childTtlMs?: number; now?: () => number; random?: () => number } = {}) {
    this.max = options.max ?? 500_000;
    this.childTtlMs = options.childTtlMs ?? 5_000;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
  }
  has(model: ReadModel, path: ObjectPath): boolean {
    const location = locationEntry(model, path);
    if (path.evseUid === undefined) return this.locations.has(location);
    const until = this.children.get(location)?.get(childEntry(path));
    return until !== undefined && until > this.now();
  }
  add(model: ReadModel, path: ObjectPath): void {
    if (this.entries >= this.max) {
      this.locations.clear();
      this.children.clear();
      this.unsettled.clear();
      this.entries = 0;
    }
    const location = locationEntry(model, path);
    if (path.evseUid === undefined) {
      if (!this.locations.has(location)) this.entries++;
      this.locations.add(location);
      return;
    }
    const unsettledUntil = this.unsettled.get(location);
    if (unsettledUntil !== undefined) {
      if (unsettledUntil > this.now()) return;
      this.unsettled.delete(location);
    }
    let known = this.children.get(location);
    if (!known) this.children.set(location, (known = new Map<string, number>()));
    const child = childEntry(path);
    if (!known.has(child)) this.entries++;
    known.set(child, this.now() + this.childTtlMs * (0.5 + this.random() / 2));
  }
  /** After a push that may have removed EVSEs or connectors of the location at this path. */
  forgetChildren(model: ReadModel, path: ObjectPath): void {
    const location = locationEntry(model, path);
    this.entries -= this.children.get(location)?.size ?? 0;
    this.children.delete(location);
    if (!this.unsettled.has(location)) this.entries++;
    this.unsettled.set(location, this.now() + this.childTtlMs);
  }
}

// Ids are CiStrings (types.asciidoc): LOC1 and loc1 are one location, as in its Kafka key.
const locationEntry = (model: ReadModel, path: ObjectPath): string => `${model}:${objectKey(path)}`;
const childEntry = (path: ObjectPath): string => `${path.evseUid ?? ''}\u0000${path.connectorId ?? ''}`.toUpperCase();

/**
 * The object must exist for a PATCH, a child PUT or a tariff DELETE (2003 for locations, 404 for a
 * tariff). A miss may only mean the projection has not applied a write yet: then wait for it
 * (bounded) before answering. `known` spares hot objects the query (locations only: a tariff can be
 * deleted).
 */
export async function requireExisting(
  store: Pick<ReadModelStore, 'exists'>,
  wait: ProjectionWait,
  model: ReadModel,
  path: ObjectPath,
  what: string,
  known?: KnownObjects,
): Promise<void> {
  if (known?.has(model, path)) return;
  if (await store.exists(model, path)) return known?.add(model, path);
  const caughtUp = await wait.caughtUp(model);
  if (await store.exists(model, path)) return known?.add(model, path);
  if (!caughtUp) throw new HubError('UNAVAILABLE', { detail: 'the read model is behind; retry shortly' });
  throw new HubError(ocpiModules[model].notFound.push, { detail: `unknown ${what} ${pathSubject(path)}` });
}

export async function appendObjectEvent(
  eventLog: EventAppender,
  req: Request,
  topic: string,
  type: string,
  path: ObjectPath,
  data: object,
  to?: string,
): Promise<void> {
  await eventLog.append(topic, [
    newEvent({
      type,
      source: 'ingress',
      subject: pathSubject(path),
      key: objectKey(path),
      data,
      correlationId: req.ctx.correlationId,
      requestId: req.ctx.requestId,
      from: partyKey(path),
      ...(to ? { to } : {}),
    }),
  ]);
}
