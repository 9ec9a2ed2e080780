import { Router, type Request, type Response } from 'express';
import { locationEventTypes, tariffEventTypes, topics } from '@hub/events';
import { HubError } from '@hub/ocpi';
import { mergePatch, type ObjectPath } from '@hub/core';
import { handle, ok, okEmpty } from '../http.ts';
import { notServed, refuseOtherMethods } from '../method-not-allowed.ts';
import type { Location } from '@hub/schemas/generated/ocpi/location';
import { appendObjectEvent, asJson, KnownObjects, type OcpiPatch, objectPath, refuseEmptySegments, requireExisting, requireOwnCpo, requireSameIds } from '../ocpi-objects.ts';
import type { VersionEdge } from '../version-edge.ts';
import { listObjects, objectDetail, type ObjectRoutesDeps } from '../object-reads.ts';

export type { ObjectRoutesDeps } from '../object-reads.ts';

// Locations and tariffs (interface document, Locations, Tariffs, Pagination, Limits; OCPI 2.2.1
// mod_locations.asciidoc and mod_tariffs.asciidoc). Pushes become events on the topics; pulls read the
// projected read models, filtered by routing rules.

type Level = 'location' | 'evse' | 'connector';

/** Location, EVSE, connector and tariff ids are CiStrings (types.asciidoc): compared case-insensitively. */
const CI_STRING_IDS = ['country_code', 'party_id', 'id', 'uid'];

function levelOf(path: ObjectPath): Level {
  return path.connectorId !== undefined ? 'connector' : path.evseUid !== undefined ? 'evse' : 'location';
}

function parentOf(path: ObjectPath): ObjectPath {
  if (path.connectorId !== undefined) return { countryCode: path.countryCode, partyId: path.partyId, id: path.id, ...(path.evseUid ? { evseUid: path.evseUid } : {}) };
  return { countryCode: path.countryCode, partyId: path.partyId, id: path.id };
}

function idsInBody(level: Level, path: ObjectPath): Record<string, string> {
  if (level === 'location') return { country_code: path.countryCode, party_id: path.partyId, id: path.id };
  if (level === 'evse') return { uid: path.evseUid ?? '' };
  return { id: path.connectorId ?? '' };
}

const eventType: Record<Level, { put: string; patch: string }> = {
  location: { put: locationEventTypes.locationPut, patch: locationEventTypes.locationPatched },
  evse: { put: locationEventTypes.evsePut, patch: locationEventTypes.evsePatched },
  connector: { put: locationEventTypes.connectorPut, patch: locationEventTypes.connectorPatched },
};

/**
 * publish_allowed_to "may only be used when the publish field is set to false" (mod_locations.asciidoc,
 * Location Object). The schema checks that within one body; a PATCH of one of the two fields is
 * checked against the stored location it merges into (read after the projection caught up, as the
 * owner's reads are), so the merged location an eMSP pulls obeys the rule too.
 */
async function requirePublishRule(deps: ObjectRoutesDeps, req: Request, path: ObjectPath, patch: OcpiPatch<Location>): Promise<void> {
  await deps.wait.caughtUp('locations');
  const stored = await deps.readModels.findVisible('locations', req.caller.platformId, path);
  // Merged as the projector will merge it: a null removes the field (mergePatch), and an empty list is
  // no list (terminology.asciidoc, Cardinality '*').
  const merged = mergePatch(stored ?? {}, asJson(patch));
  const allowedTo = merged['publish_allowed_to'];
  if (merged['publish'] === true && Array.isArray(allowedTo) && allowedTo.length > 0) {
    throw new HubError('INVALID_PARAMETERS', { detail: 'publish_allowed_to may only be used when publish is false: PATCH both, or publish false' });
  }
}

function push(deps: ObjectRoutesDeps, method: 'put' | 'patch', known: KnownObjects, edge: VersionEdge) {
  return handle(async (req: Request, res: Response) => {
    const path = objectPath(req);
    requireOwnCpo(req, path);
    const level = levelOf(path);
    // The body in the caller's version, validated there and translated to the canonical object.
    const body = edge.objectIn(level, req.body, method === 'patch', path) as OcpiPatch<Location>;
    requireSameIds(body, idsInBody(level, path), CI_STRING_IDS);
    // A PATCH needs the object itself, a child PUT its parent (2003 otherwise).
    if (method === 'patch') await requireExisting(deps.readModels, deps.wait, 'locations', path, level === 'location' ? 'location' : level === 'evse' ? 'EVSE' : 'connector', known);
    else if (level !== 'location') await requireExisting(deps.readModels, deps.wait, 'locations', parentOf(path), level === 'evse' ? 'location' : 'EVSE', known);
    if (method === 'patch' && level === 'location' && ('publish' in body || 'publish_allowed_to' in body)) await requirePublishRule(deps, req, path, body);
    await appendObjectEvent(deps.eventLog, req, topics.locations, eventType[level][method], path, body);
    // A PUT of a location or EVSE, or a PATCH carrying its evses or connectors, replaces a list of
    // children: some known EVSEs or connectors may be gone.
    if (method === 'put' ? level !== 'connector' : 'evses' in body || 'connectors' in body) known.forgetChildren('locations', path);
    okEmpty(res);
  });
}

function locationByIdForEmsp(deps: ObjectRoutesDeps, edge: VersionEdge) {
  return handle(async (req: Request, res: Response) => {
    const emsp = req.caller.parties.find((p) => p.role === 'EMSP' && !p.suspended);
    if (!emsp) throw new HubError('FOREIGN_PARTY', { detail: 'only an eMSP reads locations by their ids alone' });
    const id = String(req.params['id']);
    const evseUid = req.params['evseUid'] as string | undefined;
    const owners = await deps.readModels.locationOwners(id, emsp);
    if (owners.length > 1) throw new HubError('NOT_ENOUGH_INFORMATION', { detail: `several routed CPOs have location ${id}` });
    const [owner] = owners;
    const path: ObjectPath = { countryCode: owner?.countryCode ?? '', partyId: owner?.partyId ?? '', id, ...(evseUid ? { evseUid } : {}) };
    const found = owner && (await deps.readModels.findVisible('locations', req.caller.platformId, path));
    const shown = found && edge.objectOut(levelOf(path), found);
    if (!shown) throw new HubError('UNKNOWN_LOCATION');
    ok(res, shown);
  });
}

export function locationsRouter(deps: ObjectRoutesDeps, edge: VersionEdge): Router {
  const router = Router();
  router.use(refuseEmptySegments(['country_code', 'party_id', 'location_id', 'evse_uid', 'connector_id']));
  const paths = ['/:cc/:pid/:id', '/:cc/:pid/:id/:evseUid', '/:cc/:pid/:id/:evseUid/:connectorId'];
  router.get('/', listObjects(deps, 'locations', (documents) => edge.listOut('location', documents)));
  // mod_locations.md 2.1.2 (2.1.1, CPO interface): an eMSP gets one Location or EVSE by its ids alone,
  // {location_id}[/{evse_uid}]; the hub finds the routed CPO that has it.
  if (edge.version === '2.1.1') router.get(['/:id', '/:id/:evseUid'], locationByIdForEmsp(deps, edge));
  router.get(paths, objectDetail(deps, 'locations', objectPath, (document, path) => edge.objectOut(levelOf(path), document)));
  const known = new KnownObjects();
  router.put(paths, push(deps, 'put', known, edge));
  router.patch(paths, push(deps, 'patch', known, edge));
  // mod_locations.asciidoc, Receiver interface: no DELETE; an EVSE is removed by its status.
  router.delete(paths, notServed('locations are not deleted: PATCH the EVSE status to REMOVED'));
  return refuseOtherMethods(router);
}

export function tariffsRouter(deps: ObjectRoutesDeps, edge: VersionEdge): Router {
  const router = Router();
  router.use(refuseEmptySegments(['country_code', 'party_id', 'tariff_id']));
  // 2.2.1 and 2.1.1 prices exclude VAT (mod_tariffs.asciidoc 11.4.2): their readers' list leaves out a
  // 2.3.0 tariff with tax-inclusive prices and no vat, in the query, so X-Total-Count and pages agree
  // (docs/decisions/0012-ocpi-2.3.0-through-the-2.2.1-canonical-form.md).
  router.get('/', listObjects(deps, 'tariffs', (documents) => edge.listOut('tariff', documents), edge.version === '2.3.0' ? {} : { pricesExcludeTaxes: true }));
  router.get('/:cc/:pid/:id', objectDetail(deps, 'tariffs', objectPath, (document) => edge.objectOut('tariff', document)));
  router.put(
    '/:cc/:pid/:id',
    handle(async (req, res) => {
      const path = objectPath(req);
      requireOwnCpo(req, path);
      const body = edge.objectIn('tariff', req.body, false, path);
      requireSameIds(body, { country_code: path.countryCode, party_id: path.partyId, id: path.id }, CI_STRING_IDS);
      await appendObjectEvent(deps.eventLog, req, topics.tariffs, tariffEventTypes.tariffPut, path, body);
      okEmpty(res);
    }),
  );
  // mod_tariffs.asciidoc, Receiver interface, DELETE: a tariff no longer used and never used again.
  // The hub must know it (its owner may not delete what was never pushed, or was deleted already).
  router.delete(
    '/:cc/:pid/:id',
    handle(async (req, res) => {
      const path = objectPath(req);
      requireOwnCpo(req, path);
      await requireExisting(deps.readModels, deps.wait, 'tariffs', path, 'tariff');
      await appendObjectEvent(deps.eventLog, req, topics.tariffs, tariffEventTypes.tariffDeleted, path, {});
      okEmpty(res);
    }),
  );
  // Interface document, Endpoints (Summary): no PATCH for tariffs; a tariff is replaced by PUT.
  router.patch('/:cc/:pid/:id', notServed('push the full tariff with PUT'));
  return refuseOtherMethods(router);
}
