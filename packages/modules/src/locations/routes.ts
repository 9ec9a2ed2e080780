import type { Request, Response } from 'express';
import { locationEventTypes, topics } from '@hub/events';
import { HubError } from '@hub/ocpi';
import { mergePatch, type ObjectPath } from '@hub/core';
import { handle, ok, okEmpty } from '../http/answers.ts';
import { notServed } from '../http/method-not-allowed.ts';
import type { Location } from '@hub/schemas/generated/ocpi/location';
import { appendObjectEvent, asJson, KnownObjects, type OcpiPatch, objectPath, requireExisting, requireOwnCpo, requireSameIds } from '../http/ocpi-objects.ts';
import type { VersionEdge } from '../http/version-edge.ts';
import { listObjects, objectDetail, type ObjectRoutesDeps } from '../http/object-reads.ts';
import { objectRoutesDeps, type ModuleRoutes } from '../http/mounts.ts';

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
    const path = locationPath(req);
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
    const id = String(req.params['location_id']);
    const evseUid = req.params['evse_uid'] as string | undefined;
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

const LOCATION = 'locations/{country_code}/{party_id}/{location_id}';
/** The location, EVSE and connector paths (module.ts, LEVELS). */
const LEVELS = [LOCATION, `${LOCATION}/{evse_uid}`, `${LOCATION}/{evse_uid}/{connector_id}`];
const locationPath = (req: Request) => objectPath(req, 'location_id');

export const locationsRoutes: ModuleRoutes = (moduleDeps, _version, edge) => {
  const deps = objectRoutesDeps(moduleDeps);
  const known = new KnownObjects();
  const detail = objectDetail(deps, 'locations', locationPath, (document, path) => edge.objectOut(levelOf(path), document));
  const put = push(deps, 'put', known, edge);
  const patch = push(deps, 'patch', known, edge);
  // mod_locations.asciidoc, Receiver interface: no DELETE; an EVSE is removed by its status.
  const refused = notServed('locations are not deleted: PATCH the EVSE status to REMOVED');
  const byId = locationByIdForEmsp(deps, edge);
  return {
    'GET locations': listObjects(deps, 'locations', (documents) => edge.listOut('location', documents)),
    ...Object.fromEntries(LEVELS.flatMap((path) => [[`GET ${path}`, detail], [`PUT ${path}`, put], [`PATCH ${path}`, patch], [`DELETE ${path}`, refused]])),
    // mod_locations.md 2.1.2 (2.1.1, CPO interface): an eMSP gets one Location or EVSE by its ids alone,
    // {location_id}[/{evse_uid}]; the hub finds the routed CPO that has it (declared for 2.1.1 only).
    'GET locations/{location_id}': byId,
    'GET locations/{location_id}/{evse_uid}': byId,
  };
};
