import type { RequestHandler } from 'express';
import type { ModuleId } from '@hub/modules';
import type { OcpiVersion } from '@hub/ocpi';
import type { IngressDeps } from './app.ts';
import type { VersionEdge } from './version-edge.ts';
import { locationsRouter, tariffsRouter, type ObjectRoutesDeps } from './routes/locations.ts';
import { cdrsRouter, sessionsRouter } from './routes/sessions-cdrs.ts';
import { tokensRouter } from './routes/tokens.ts';
import { tokenObjectsRouter } from './routes/token-objects.ts';
import { commandCallbackRouter, commandsRouter, type CommandsDeps } from './routes/commands.ts';
import { chargingProfileCallbackRouter, chargingProfilesRouter, type ChargingProfilesDeps } from './routes/charging-profiles.ts';
import { hubClientInfoRouter } from './routes/hubclientinfo.ts';

// The handlers of each module, by module: app.ts mounts them at /ocpi/{version}/{path} for every version
// the module declares endpoints in (@hub/modules, `http.endpoints`), so a module served in one more
// version is a line in its folder, not a mount here. Typed by ModuleId: a module in the table without
// handlers does not compile.

/** Handlers mounted below /ocpi/{version}; `authenticated: false` only for callbacks a CPO posts to a response_url (interface document, Authentication 1). */
export interface Mount {
  readonly path: string;
  readonly authenticated: boolean;
  /** Whether the body is parsed as JSON first. */
  readonly json: boolean;
  readonly handlers: readonly RequestHandler[];
}

export type ModuleMounts = Readonly<Record<ModuleId, (version: OcpiVersion, edge: VersionEdge) => readonly Mount[]>>;

const at = (path: string, ...handlers: RequestHandler[]): Mount => ({ path, authenticated: true, json: true, handlers });
/** Mounted before the module's authenticated path, which would otherwise take it. */
const callback = (path: string, handler: RequestHandler): Mount => ({ path, authenticated: false, json: true, handlers: [handler] });

// Long because: the deps each module's handlers take, built once from the ingress's, then one entry per
// module.
export function moduleMounts(deps: IngressDeps): ModuleMounts {
  const objects: ObjectRoutesDeps = { ...deps.objects, validator: deps.validator, publicBaseUrl: deps.publicBaseUrl };
  const sessionCdrDeps = { eventLog: deps.objects.eventLog, readModels: deps.objects.readModels, deliveries: deps.deliveries, validator: deps.validator, publicBaseUrl: deps.publicBaseUrl, dispatcherWait: deps.dispatcherWait };
  const forwarded = {
    targets: deps.routing,
    deliveries: deps.deliveries,
    eventLog: deps.objects.eventLog,
    realtime: deps.tokens.realtime,
    cipher: deps.tokens.cipher,
    rateLimiter: deps.objects.rateLimiter,
    validator: deps.validator,
    publicBaseUrl: deps.publicBaseUrl,
    registeredHosts: (platformId: string) => deps.commands.commands.registeredHosts(platformId),
  };
  const commandsDeps: CommandsDeps = { ...deps.commands, ...forwarded, readModels: deps.objects.readModels };
  const chargingProfilesDeps: ChargingProfilesDeps = {
    ...deps.chargingProfiles,
    ...forwarded,
    policy: deps.commands.policy,
    // The response_url rules and the CPO's grace are the commands' (mod_charging_profiles.asciidoc,
    // Flow: "similar to the Commands module").
    graceSeconds: deps.commands.graceSeconds,
    responseUrlHosts: deps.commands.responseUrlHosts,
  };
  const tokensDeps = { ...deps.tokens, validator: deps.validator, targets: deps.routing, readModels: deps.objects.readModels, rateLimiter: deps.objects.rateLimiter };
  const clientInfoDeps = { store: deps.store, publicBaseUrl: deps.publicBaseUrl, limits: { defaultLimit: deps.limits.defaultPageLimit, maxLimit: deps.limits.maxPageLimit } };
  // Charging profiles exist in 2.2.1 and 2.3.0 only (the module declares no 2.1.1 endpoint).
  const profilesVersion = (version: OcpiVersion) => (version === '2.3.0' ? '2.3.0' : '2.2.1');
  return {
    locations: (_version, edge) => [at('locations', locationsRouter(objects, edge))],
    tariffs: (_version, edge) => [at('tariffs', tariffsRouter(objects, edge))],
    sessions: (_version, edge) => [at('sessions', sessionsRouter(sessionCdrDeps, edge))],
    cdrs: (_version, edge) => [at('cdrs', cdrsRouter({ ...sessionCdrDeps, cdrs: deps.cdrs }, edge))],
    // A CPO posts its CommandResult to the callback of its own version: the response_url the commands
    // route gives it (mod_commands.asciidoc, CommandResult).
    commands: (_version, edge) => [callback('commands/callback', commandCallbackRouter(commandsDeps, edge)), at('commands', commandsRouter(commandsDeps, edge))],
    chargingprofiles: (version) => [
      callback('chargingprofiles/callback', chargingProfileCallbackRouter(chargingProfilesDeps, profilesVersion(version))),
      at('chargingprofiles', chargingProfilesRouter(chargingProfilesDeps, profilesVersion(version))),
    ],
    tokens: (_version, edge) => [at('tokens', tokensRouter(tokensDeps, edge), tokenObjectsRouter({ ...objects, targets: deps.routing, hub: deps.credentials.hub }, edge))],
    // The hub's Sender interface of ClientInfo reads no body (mod_hub_client_info.asciidoc, GET).
    hubclientinfo: () => [{ path: 'hubclientinfo', authenticated: true, json: false, handlers: [hubClientInfoRouter(clientInfoDeps)] }],
  };
}
