import type { HubErrorKind, InterfaceRole, OcpiVersion } from '@hub/ocpi';
import type { OcpiModule } from './module-rules.ts';

// A module's HTTP surface as data: where the hub serves it in each OCPI version (version details) and
// each route it answers (the API catalogue behind docs/openapi.json). The ingress derives its mounts and
// version details from `endpoints`; services/ingress/src/api-catalogue.ts derives the catalogue of every
// version from `routes`, and its test walks the express app against it. Paths use OCPI's parameter
// names (the module chapters' Receiver/Sender interface sections); schema ids are relative to schemas/.

export type RouteAuth = 'hub-token' | 'initial-token' | 'none';
export type RouteMethod = 'get' | 'put' | 'patch' | 'post' | 'delete';
/** Request headers a route reads beyond Authorization, X-Request-ID and X-Correlation-ID. */
export type RouteHeader = 'OCPI-from' | 'OCPI-to';

export interface RouteSpec {
  readonly method: RouteMethod;
  /** Path template with OCPI parameter names, e.g. /ocpi/2.2.1/tariffs/{country_code}/{party_id}/{tariff_id} */
  readonly path: string;
  /** The OCPI module (the document's tag). */
  readonly module: string;
  readonly summary: string;
  readonly auth: RouteAuth;
  /** Request body: any of these schemas; partial = an OCPI PATCH (any subset, last_updated required). */
  readonly body?: { readonly schemas: readonly string[]; readonly partial?: boolean; readonly optional?: boolean };
  /** The envelope's data on success; list = an array of the schema; absent = no data. */
  readonly data?: { readonly schema: string; readonly list?: boolean };
  /** offset/limit/date_from/date_to and X-Total-Count, X-Limit, Link (transport_and_format.asciidoc, Pagination). */
  readonly paginated?: boolean;
  readonly requestHeaders?: readonly RouteHeader[];
  /** ?type= (mod_tokens.asciidoc, TokenType; RFID when omitted). */
  readonly tokenType?: boolean;
  /** Required query parameters (mod_charging_profiles.asciidoc, GET and DELETE: "all parameters are added to the URL"). */
  readonly query?: readonly ('duration' | 'response_url')[];
  /** Response headers on success beyond the ones every answer carries. */
  readonly responseHeaders?: readonly 'Location'[];
  /** Error kinds (packages/ocpi/src/errors.ts) the handler itself answers with; authentication, body parsing and INTERNAL/UNAVAILABLE are added by the generator. */
  readonly errors: readonly HubErrorKind[];
  /** Versions whose form of this 2.2.1 route the module does not serve, though it serves the module in them. */
  readonly notIn?: readonly OcpiVersion[];
  /** The request body schemas of its OCPI 2.1.1 form, where they are not the 2.2.1 ones renamed. */
  readonly bodyIn211?: readonly string[];
}

/** One endpoint of a module in a version's details: the module's identifier with these roles, at this path. */
export interface ModuleEndpoint {
  readonly roles: readonly InterfaceRole[];
  /** Path below /ocpi/{version} */
  readonly path: string;
}

/** A module's HTTP surface. */
export interface ModuleHttp {
  /** The versions it is served in and its endpoints in each (absent: not served in that version). */
  readonly endpoints: Partial<Record<OcpiVersion, readonly ModuleEndpoint[]>>;
  /** Its OCPI 2.2.1 routes; the other versions' are derived from them (api-catalogue.ts) unless `notIn` says. */
  readonly routes: readonly RouteSpec[];
  /** Routes only one older version has (OCPI 2.1.1's reads by id alone), written with their full path. */
  readonly onlyIn?: readonly RouteSpec[];
}

export const V221 = '/ocpi/2.2.1';
export const V211 = '/ocpi/2.1.1';
export const PUSH_ERRORS: readonly HubErrorKind[] = ['INVALID_PARAMETERS', 'FOREIGN_PARTY'];
export const LIST_ERRORS: readonly HubErrorKind[] = ['INVALID_PARAMETERS', 'RATE_LIMITED'];

const V230 = '/ocpi/2.3.0';

/** The OCPI 2.1.1 form of a 2.2.1 route served through the same handler (docs/reference/version-mapping.md). */
export function in211(route: RouteSpec): RouteSpec {
  const schema = (id: string) => id.replace(/^ocpi\//, 'ocpi-2.1.1/');
  return {
    ...route,
    path: route.path.replace(V221, V211),
    summary: `${route.summary} (OCPI 2.1.1 objects)`,
    // 2.1.1 has no routing headers (transport_and_format.md, 2.1.1).
    requestHeaders: [],
    ...(route.body ? { body: { ...route.body, schemas: route.bodyIn211 ?? route.body.schemas.map(schema) } } : {}),
    ...(route.data ? { data: { ...route.data, schema: schema(route.data.schema) } } : {}),
  };
}

/** The OCPI 2.3.0 form of a 2.2.1 route served through the same handler (docs/decisions/0012-ocpi-2.3.0-through-the-2.2.1-canonical-form.md). */
export function in230(route: RouteSpec): RouteSpec {
  const schema = (id: string) => id.replace(/^ocpi\//, 'ocpi-2.3.0/');
  return {
    ...route,
    path: route.path.replace(V221, V230),
    summary: `${route.summary} (OCPI 2.3.0 objects)`,
    ...(route.body ? { body: { ...route.body, schemas: route.body.schemas.map(schema) } } : {}),
    ...(route.data ? { data: { ...route.data, schema: schema(route.data.schema) } } : {}),
  };
}

const FORM: Readonly<Record<OcpiVersion, (route: RouteSpec) => RouteSpec>> = { '2.2.1': (route) => route, '2.1.1': in211, '2.3.0': in230 };

/**
 * A module's routes as a partner of `version` calls them: its 2.2.1 routes in that version's form,
 * less those the version leaves out, then the routes only that version has; none where the module is
 * not served in it. The ingress mounts exactly these (http/mounts.ts) and the API catalogue documents them.
 */
export function routesIn(module: OcpiModule, version: OcpiVersion): RouteSpec[] {
  if (module.http.endpoints[version] === undefined) return [];
  const own = module.http.routes.filter((r) => !r.notIn?.includes(version)).map(FORM[version]);
  return [...own, ...(module.http.onlyIn ?? []).filter((r) => r.path.startsWith(`/ocpi/${version}/`))];
}
