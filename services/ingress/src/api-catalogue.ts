import type { HubErrorKind } from '@hub/ocpi';
import { in211, in230, modulesServedIn, ocpiModules, V211, V221, type OcpiModule, type RouteSpec } from '@hub/modules';

// The partner API's routes, for the documents (schemas/generate-api-docs.ts writes docs/openapi.json
// from this list and the schemas): the hub's own (versions, credentials) here, each module's in its
// folder of @hub/modules (`http.routes`, in their 2.2.1 form; the 2.1.1 and 2.3.0 forms are derived
// below for the versions the module is served in, as @hub/modules routesIn derives them for the mounts).
// The handlers live in each module's routes.ts, mounted by app.ts; test/api-catalogue.unit.test.ts walks the express app and fails when a route is missing here or
// listed here without being served. Paths use OCPI's parameter names (the module chapters'
// Receiver/Sender interface sections); schema ids are relative to schemas/. A method a module refuses
// on purpose with its own handler (DELETE of a location) is listed with METHOD_NOT_ALLOWED; the
// catch-all 405 for every other method of a known path is documented once per path by the generator.

export type { RouteAuth, RouteHeader, RouteMethod, RouteSpec } from '@hub/modules';

const V = V221;
const V230 = '/ocpi/2.3.0';
const CREDENTIALS_LINK_ERRORS: readonly HubErrorKind[] = ['INVALID_PARAMETERS', 'PARTNER_API_UNUSABLE', 'UNSUPPORTED_VERSION', 'NO_MATCHING_ENDPOINTS'];

/** The hub's own routes: versions and credentials of each version (the handshake, not an OCPI object module). */
const HUB_ROUTES: readonly RouteSpec[] = [
  { method: 'get', path: '/ocpi/versions', module: 'versions', summary: 'The versions the operator allowed the caller (2.2.1 unless registered with others: 2.1.1, 2.3.0)', auth: 'initial-token', data: { schema: 'ocpi/version.json', list: true }, errors: [] },
  { method: 'get', path: V, module: 'versions', summary: 'The modules the hub serves, once per role', auth: 'initial-token', data: { schema: 'ocpi/version_details.json' }, errors: [] },

  { method: 'get', path: `${V}/credentials`, module: 'credentials', summary: "The hub's credentials for this token", auth: 'initial-token', data: { schema: 'ocpi/credentials.json' }, errors: [] },
  { method: 'post', path: `${V}/credentials`, module: 'credentials', summary: 'Register with the initial token (once)', auth: 'initial-token', body: { schemas: ['ocpi/credentials.json'] }, data: { schema: 'ocpi/credentials.json' }, errors: [...CREDENTIALS_LINK_ERRORS, 'ALREADY_REGISTERED'] },
  { method: 'put', path: `${V}/credentials`, module: 'credentials', summary: 'Update the registration', auth: 'initial-token', body: { schemas: ['ocpi/credentials.json'] }, data: { schema: 'ocpi/credentials.json' }, errors: [...CREDENTIALS_LINK_ERRORS, 'NOT_REGISTERED'] },
  { method: 'delete', path: `${V}/credentials`, module: 'credentials', summary: 'Unregister', auth: 'initial-token', errors: ['NOT_REGISTERED'] },

  // OCPI 2.1.1 partners (docs/reference/version-mapping.md): the same flows in 2.1.1 objects.
  { method: 'get', path: V211, module: 'versions', summary: 'The modules the hub serves to 2.1.1 partners (no roles in 2.1.1)', auth: 'initial-token', data: { schema: 'ocpi-2.1.1/version_details.json' }, errors: [] },
  { method: 'get', path: `${V211}/credentials`, module: 'credentials', summary: "The hub's 2.1.1 credentials for this token", auth: 'initial-token', data: { schema: 'ocpi-2.1.1/credentials.json' }, errors: [] },
  { method: 'post', path: `${V211}/credentials`, module: 'credentials', summary: 'Register in OCPI 2.1.1 with the initial token (once)', auth: 'initial-token', body: { schemas: ['ocpi-2.1.1/credentials.json'] }, data: { schema: 'ocpi-2.1.1/credentials.json' }, errors: [...CREDENTIALS_LINK_ERRORS, 'ALREADY_REGISTERED'] },
  { method: 'put', path: `${V211}/credentials`, module: 'credentials', summary: 'Update the registration, or switch to 2.1.1', auth: 'initial-token', body: { schemas: ['ocpi-2.1.1/credentials.json'] }, data: { schema: 'ocpi-2.1.1/credentials.json' }, errors: [...CREDENTIALS_LINK_ERRORS, 'NOT_REGISTERED'] },
  { method: 'delete', path: `${V211}/credentials`, module: 'credentials', summary: 'Unregister', auth: 'initial-token', errors: ['NOT_REGISTERED'] },

  // OCPI 2.3.0 partners (docs/decisions/0012-ocpi-2.3.0-through-the-2.2.1-canonical-form.md): the modules served in 2.3.0 so far.
  { method: 'get', path: V230, module: 'versions', summary: 'The modules the hub serves to 2.3.0 partners, once per role', auth: 'initial-token', data: { schema: 'ocpi-2.3.0/version_details.json' }, errors: [] },
  { method: 'get', path: `${V230}/credentials`, module: 'credentials', summary: "The hub's 2.3.0 credentials for this token: hub_party_id and the parties routed to the caller", auth: 'initial-token', data: { schema: 'ocpi-2.3.0/credentials.json' }, errors: [] },
  { method: 'post', path: `${V230}/credentials`, module: 'credentials', summary: 'Register in OCPI 2.3.0 with the initial token (once)', auth: 'initial-token', body: { schemas: ['ocpi-2.3.0/credentials.json'] }, data: { schema: 'ocpi-2.3.0/credentials.json' }, errors: [...CREDENTIALS_LINK_ERRORS, 'ALREADY_REGISTERED'] },
  { method: 'put', path: `${V230}/credentials`, module: 'credentials', summary: 'Update the registration, or switch to 2.3.0', auth: 'initial-token', body: { schemas: ['ocpi-2.3.0/credentials.json'] }, data: { schema: 'ocpi-2.3.0/credentials.json' }, errors: [...CREDENTIALS_LINK_ERRORS, 'NOT_REGISTERED'] },
  { method: 'delete', path: `${V230}/credentials`, module: 'credentials', summary: 'Unregister', auth: 'initial-token', errors: ['NOT_REGISTERED'] },
];

/** A module's 2.2.1 routes in `version`'s form, where the module is served in it and the route not left out. */
function formsIn(version: '2.1.1' | '2.3.0', form: (route: RouteSpec) => RouteSpec): RouteSpec[] {
  return modulesServedIn(version).flatMap((m) => m.http.routes.filter((r) => !r.notIn?.includes(version)).map(form));
}

const moduleRoutes = (Object.values(ocpiModules) as OcpiModule[]).flatMap((m) => m.http.routes);

export const API_CATALOGUE: readonly RouteSpec[] = [
  ...HUB_ROUTES,
  ...moduleRoutes,
  ...formsIn('2.1.1', in211),
  ...(Object.values(ocpiModules) as OcpiModule[]).flatMap((m) => m.http.onlyIn ?? []),
  ...formsIn('2.3.0', in230),
];
