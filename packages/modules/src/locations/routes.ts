import { Router, type Request, type Response } from 'express';
import { locationEventTypes, topics } from '@hub/events';
import { HubError } from '@hub/ocpi';
import { mergePatch, type ObjectPath } from '@hub/core';
import { handle, ok, okEmpty } from '../http/answers.ts';
import { notServed, refuseOtherMethods } from '../http/method-not-allowed.ts';
import type { Location } from '@hub/schemas/generated/ocpi/location';
import { appendObjectEvent, asJson, KnownObjects, type OcpiPatch, objectPath, refuseEmptySegments, requireExisting, requireOwnCpo, requireSameIds } from '../http/ocpi-objects.ts';
import type { VersionEdge } from '../http/version-edge.ts';
import { listObjects, objectDetail, type ObjectRoutesDeps } from '../http/object-reads.ts';
import { at, objectRoutesDeps, type ModuleMounts } from '../http/mounts.ts';

// Locations (interface document, Locations, Pagination, Limits; OCPI 2.2.1 mod_locations.asciidoc).
// Pushes become events on the topic; pulls read the projected read model, filtered by routing rules.

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

export const locationsMounts: ModuleMounts = (deps, _version, edge) => [at('locations', locationsRouter(objectRoutesDeps(deps), edge))];
