import { Router, type RequestHandler } from 'express';
import type { OcpiVersion, PartyRef } from '@hub/ocpi';
import type { OcpiModule } from '../module-rules.ts';
import { routesIn, type RouteSpec } from '../route-spec.ts';
import { refuseOtherMethods } from './method-not-allowed.ts';
import { refuseEmptySegments } from './ocpi-objects.ts';
import type { RegistryStore, RoutingDirectory } from '@hub/core';
import type { SchemaValidator } from '@hub/schemas';
import type { ObjectRoutesDeps } from './object-reads.ts';
import type { IngressDeliveries } from './ports.ts';
import type { DispatcherWait } from './known-sessions.ts';
import type { VersionEdge } from './version-edge.ts';
import type { CdrAppendDeps } from '../cdrs/routes.ts';
import type { TokensDeps } from '../tokens/authorize-routes.ts';
import type { CommandsDeps } from '../commands/routes.ts';
import type { ChargingProfilesDeps } from '../chargingprofiles/routes.ts';

// How a module's folder hands its routes to the ingress (decision 0016): its module.ts declares each
// route as data (method, OCPI path, authentication, body and data schemas, errors: RouteSpec), its
// routes.ts gives the handler of each, keyed by method and path (`ModuleRoutes`), and `mountsOf`
// builds the express routers from the declarations: the paths below /ocpi/{version}, which ones are
// authenticated and parsed as JSON, the 2001 for an empty path segment and the 405 for another
// method. A route without a handler, or a handler without a route, stops the app from starting. The
// deps are the ports and settings the ingress's composition root built, the same for every module.

/** Handlers mounted below /ocpi/{version}; `authenticated: false` only for callbacks a CPO posts to a response_url (interface document, Authentication 1). */
export interface Mount {
  readonly path: string;
  readonly authenticated: boolean;
  /** Whether the body is parsed as JSON first. */
  readonly json: boolean;
  readonly handlers: readonly RequestHandler[];
}

/** What the module routes are given: the ingress's ports and settings (services/ingress/src/compose.ts builds them). */
export interface ModuleRouteDeps {
  readonly validator: SchemaValidator;
  readonly publicBaseUrl: string;
  readonly limits: { readonly defaultPageLimit: number; readonly maxPageLimit: number };
  /** The hub's own party (an OCPI-to naming it is a Broadcast Push). */
  readonly credentials: { readonly hub: PartyRef };
  readonly store: RegistryStore;
  readonly objects: Omit<ObjectRoutesDeps, 'validator' | 'publicBaseUrl'>;
  readonly deliveries: IngressDeliveries;
  /** CDR appends, each CDR once in ocpi.cdrs.v1 (docs/decisions/0003-each-cdr-once.md). */
  readonly cdrs: CdrAppendDeps;
  /** Who receives what, and where (tokens and commands forwards). */
  readonly routing: RoutingDirectory;
  readonly dispatcherWait: DispatcherWait;
  readonly tokens: Omit<TokensDeps, 'validator' | 'targets' | 'readModels' | 'rateLimiter'>;
  readonly commands: Pick<CommandsDeps, 'commands' | 'checkOutboundUrl' | 'perMinute' | 'graceSeconds' | 'responseUrlHosts'>;
  readonly chargingProfiles: Pick<ChargingProfilesDeps, 'chargingProfiles' | 'perMinute' | 'forwarded' | 'results'>;
}

/**
 * A module's handlers by route, keyed `METHOD path` with the path of its declaration below
 * /ocpi/{version} in its 2.2.1 form (`PUT tariffs/{country_code}/{party_id}/{tariff_id}`; a route only
 * an older version has, by its own path). Path parameters reach the handler by their OCPI names
 * (req.params['tariff_id']).
 */
export type RouteHandlers = Readonly<Record<string, RequestHandler>>;

/** A module's handlers in one version, through that version's translating edge. */
export type ModuleRoutes = (deps: ModuleRouteDeps, version: OcpiVersion, edge: VersionEdge) => RouteHandlers;

/** The key of a route in RouteHandlers: the same for its form in every version (the path below /ocpi/{version}). */
export function routeKey(route: Pick<RouteSpec, 'method' | 'path'>): string {
  return `${route.method.toUpperCase()} ${route.path.replace(/^\/ocpi\/[^/]+\//, '')}`;
}

/** Every key a module's handlers may have: its routes in any version. */
function knownKeys(module: OcpiModule): Set<string> {
  return new Set([...module.http.routes, ...(module.http.onlyIn ?? [])].map(routeKey));
}

interface Planned {
  readonly route: RouteSpec;
  /** Below the mount, in express form (/:country_code/:party_id/:tariff_id). */
  readonly subPath: string;
  readonly segments: readonly string[];
  readonly handler: RequestHandler;
}

/** The path's segments' names: a parameter's OCPI name, a literal as it is. */
const segmentName = (segment: string) => segment.replace(/^\{(.+)\}$/, '$1');

/**
 * Whether a request below the mount has an empty segment: named as the declared route with as many
 * segments names it, else as the longest route does (refuseEmptySegments).
 */
function emptySegmentCheck(planned: readonly Planned[]): RequestHandler | undefined {
  if (!planned.some((p) => p.segments.some((s) => s.startsWith('{')))) return undefined;
  const longest = [...planned].sort((a, b) => b.segments.length - a.segments.length)[0]?.segments ?? [];
  const byCount = new Map<number, RequestHandler>();
  for (const p of planned) if (!byCount.has(p.segments.length)) byCount.set(p.segments.length, refuseEmptySegments(p.segments.map(segmentName)));
  const fallback = refuseEmptySegments(longest.map(segmentName));
  return (req, res, next) => (byCount.get(req.path.split('/').length - 1) ?? fallback)(req, res, next);
}

/**
 * The mounts of a module in `version`, built from its declared routes and its handlers: one per path
 * prefix before the first parameter (`tariffs`, `commands/callback`), longest first so a callback is
 * not taken by its module's authenticated mount; routes in the order declared.
 */
export function mountsOf(module: OcpiModule, version: OcpiVersion, handlers: RouteHandlers): Mount[] {
  const known = knownKeys(module);
  const stray = Object.keys(handlers).filter((key) => !known.has(key));
  if (stray.length > 0) throw new Error(`${module.id}: handlers for routes it does not declare: ${stray.join(', ')}`);
  const groups = new Map<string, Planned[]>();
  for (const route of routesIn(module, version)) {
    const key = routeKey(route);
    const handler = handlers[key];
    if (!handler) throw new Error(`${module.id} ${version}: no handler for ${key}`);
    const segments = route.path.replace(`/ocpi/${version}/`, '').split('/');
    const firstParameter = segments.findIndex((s) => s.startsWith('{'));
    const mountPath = (firstParameter < 0 ? segments : segments.slice(0, firstParameter)).join('/');
    const below = firstParameter < 0 ? [] : segments.slice(firstParameter);
    const planned = { route, segments: below, subPath: `/${below.map((s) => s.replace(/^\{(.+)\}$/, ':$1')).join('/')}`, handler };
    groups.set(mountPath, [...(groups.get(mountPath) ?? []), planned]);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => b.length - a.length)
    .map(([path, planned]) => {
      const authenticated = planned.map((p) => p.route.auth !== 'none');
      if (new Set(authenticated).size > 1) throw new Error(`${module.id}: ${path} mixes authenticated routes and callbacks`);
      const router = Router();
      const check = emptySegmentCheck(planned);
      if (check) router.use(check);
      // One express Route per path, its methods on it: a request is matched against each path once.
      const byPath = new Map<string, ReturnType<typeof router.route>>();
      for (const p of planned) {
        const at = byPath.get(p.subPath) ?? router.route(p.subPath);
        byPath.set(p.subPath, at);
        at[p.route.method](p.handler);
      }
      return { path, authenticated: authenticated[0] ?? true, json: planned.some((p) => p.route.body !== undefined), handlers: [refuseOtherMethods(router)] };
    });
}

/** The deps of the projected-object routes (pushes and pulls of locations, tariffs, tokens). */
export function objectRoutesDeps(deps: ModuleRouteDeps): ObjectRoutesDeps {
  return { ...deps.objects, validator: deps.validator, publicBaseUrl: deps.publicBaseUrl };
}
