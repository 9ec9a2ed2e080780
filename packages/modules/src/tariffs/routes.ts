import type { Request } from 'express';
import { tariffEventTypes, topics } from '@hub/events';
import { HubError } from '@hub/ocpi';
import { mergePatch } from '@hub/core';
import { pricesExcludeTaxes } from '@hub/versions';
import type { VersionEdge } from '../http/version-edge.ts';
import { handle, okEmpty } from '../http/answers.ts';
import { notServed } from '../http/method-not-allowed.ts';
import { appendObjectEvent, objectPath, requireExisting, requireOwnCpo, requireSameIds } from '../http/ocpi-objects.ts';
import { listObjects, objectDetail, type ObjectRoutesDeps } from '../http/object-reads.ts';
import { objectRoutesDeps, type ModuleRoutes } from '../http/mounts.ts';

// Tariffs (interface document, Tariffs, Pagination; OCPI 2.2.1 mod_tariffs.asciidoc). Pushes become
// events on the topic; pulls read the projected read model, filtered by routing rules.

/** Tariff ids are CiStrings (types.asciidoc): compared case-insensitively, as country_code and party_id. */
const CI_STRING_IDS = ['country_code', 'party_id', 'id'];

const TARIFF = 'tariffs/{country_code}/{party_id}/{tariff_id}';
const tariffPath = (req: Request) => objectPath(req, 'tariff_id');

/**
 * A 2.1.1 CPO's tariff PATCH (ocpi-2.1.1/mod_tariffs.md 2.2.3: "works the same as the PUT method, except
 * that the fields/objects that have to be updated have to be present"; 2.2.1 and the interface document
 * have none). Read once the projection caught up (a PUT just before is the tariff patched), the fields
 * sent are translated as part of the whole 2.1.1 tariff they make (validated so) and replace those of the
 * stored canonical tariff; its fields 2.1.1 has none of (type, min_price...) stay. It goes on as a PUT
 * of the whole, last_updated the time received when the PATCH has none, as for other 2.1.1 PATCHes.
 * Two PATCHes of one tariff at once (two replicas) each read the same tariff: the later PUT wins.
 */
function tariffPatch211(deps: ObjectRoutesDeps, edge: VersionEdge) {
  return handle(async (req: Request, res) => {
    const path = tariffPath(req);
    requireOwnCpo(req, path);
    if (req.body === null || typeof req.body !== 'object' || Array.isArray(req.body)) throw new HubError('INVALID_PARAMETERS', { detail: 'body must be a JSON object' });
    if (!(await deps.wait.caughtUp('tariffs'))) throw new HubError('UNAVAILABLE', { detail: 'the read model is behind; retry shortly' });
    const stored = await deps.readModels.findVisible('tariffs', req.caller.platformId, path);
    if (!stored) throw new HubError('UNKNOWN_TARIFF', { detail: `unknown tariff ${path.id}` });
    const as211 = edge.objectOut('tariff', stored);
    if (!as211) throw new HubError('INVALID_PARAMETERS', { detail: `tariff ${path.id} has no OCPI 2.1.1 form to patch: PUT it whole` });
    const patch: Record<string, unknown> = { last_updated: new Date().toISOString(), ...(req.body as Record<string, unknown>) };
    const translated = edge.objectIn('tariff', mergePatch(as211, patch), false, path);
    // The 2.1.1 Tariff's fields have the same names in 2.2.1 (docs/reference/version-mapping.md, Tariff).
    const updated: Record<string, unknown> = { ...stored };
    for (const field of Object.keys(patch)) {
      if (field in translated) updated[field] = translated[field];
      else delete updated[field];
    }
    requireSameIds(updated, { country_code: path.countryCode, party_id: path.partyId, id: path.id }, CI_STRING_IDS);
    await appendObjectEvent(deps.eventLog, req, topics.tariffs, tariffEventTypes.tariffPut, path, updated);
    okEmpty(res);
  });
}

// Long because: one handler per declared route (module.ts), each a closure over deps and the edge.
export const tariffsRoutes: ModuleRoutes = (moduleDeps, _version, edge) => {
  const deps: ObjectRoutesDeps = objectRoutesDeps(moduleDeps);
  // A 2.3.0 tariff with tax-inclusive prices and no vat has no 2.2.1 form (v2.3.0/prices.ts
  // pricesExcludeTaxes): not shown to a 2.2.1 reader, as the translating edges do not show what they
  // cannot write (2.1.1's tariffOut refuses it itself).
  const shown = (document: Record<string, unknown>) => (edge.version === '2.2.1' && !pricesExcludeTaxes(document) ? undefined : edge.objectOut('tariff', document));
  return {
    // 2.2.1 and 2.1.1 prices exclude VAT (mod_tariffs.asciidoc 11.4.2): their readers' list leaves out a
    // 2.3.0 tariff with tax-inclusive prices and no vat, in the query, so X-Total-Count and pages agree
    // (docs/decisions/0012-ocpi-2.3.0-through-the-2.2.1-canonical-form.md).
    'GET tariffs': listObjects(deps, 'tariffs', (documents) => edge.listOut('tariff', documents), edge.version === '2.3.0' ? {} : { pricesExcludeTaxes: true }),
    [`GET ${TARIFF}`]: objectDetail(deps, 'tariffs', tariffPath, shown),
    [`PUT ${TARIFF}`]: handle(async (req, res) => {
      const path = tariffPath(req);
      requireOwnCpo(req, path);
      const body = edge.objectIn('tariff', req.body, false, path);
      requireSameIds(body, { country_code: path.countryCode, party_id: path.partyId, id: path.id }, CI_STRING_IDS);
      await appendObjectEvent(deps.eventLog, req, topics.tariffs, tariffEventTypes.tariffPut, path, body);
      okEmpty(res);
    }),
    // mod_tariffs.asciidoc, Receiver interface, DELETE: a tariff no longer used and never used again.
    // The hub must know it (its owner may not delete what was never pushed, or was deleted already).
    [`DELETE ${TARIFF}`]: handle(async (req, res) => {
      const path = tariffPath(req);
      requireOwnCpo(req, path);
      await requireExisting(deps.readModels, deps.wait, 'tariffs', path, 'tariff');
      await appendObjectEvent(deps.eventLog, req, topics.tariffs, tariffEventTypes.tariffDeleted, path, {});
      okEmpty(res);
    }),
    // Interface document, Endpoints (Summary): no PATCH for tariffs; a tariff is replaced by PUT. 2.1.1 has one.
    [`PATCH ${TARIFF}`]: edge.version === '2.1.1' ? tariffPatch211(deps, edge) : notServed('push the full tariff with PUT'),
  };
};
