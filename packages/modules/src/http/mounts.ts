import type { RequestHandler } from 'express';
import type { OcpiVersion, PartyRef } from '@hub/ocpi';
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

// How a module's folder hands its routes to the ingress (decision 0016): each folder's routes.ts
// exports a `ModuleMounts` function, the ingress mounts what it returns at /ocpi/{version}/{path} for
// every version the module declares endpoints in (`http.endpoints`), behind the version's
// authentication and JSON body parser. The deps are the ports and settings the ingress's composition
// root built, the same object for every module.

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

/** A module's mounts in one version, through that version's translating edge. */
export type ModuleMounts = (deps: ModuleRouteDeps, version: OcpiVersion, edge: VersionEdge) => readonly Mount[];

/** Authenticated handlers of a module's endpoint, the body parsed as JSON. */
export const at = (path: string, ...handlers: RequestHandler[]): Mount => ({ path, authenticated: true, json: true, handlers });

/** A callback a CPO posts to a response_url the hub gave it; mounted before the module's authenticated path, which would otherwise take it. */
export const callback = (path: string, handler: RequestHandler): Mount => ({ path, authenticated: false, json: true, handlers: [handler] });

/** The deps of the projected-object routes (pushes and pulls of locations, tariffs, tokens). */
export function objectRoutesDeps(deps: ModuleRouteDeps): ObjectRoutesDeps {
  return { ...deps.objects, validator: deps.validator, publicBaseUrl: deps.publicBaseUrl };
}
