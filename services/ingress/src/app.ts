import express, { type Express } from 'express';
import { HubError, type OcpiVersion } from '@hub/ocpi';
import { requestContext, type HttpMetrics, type Logger } from '@hub/observability';
import type { CredentialsDeps } from '@hub/registry';
import type { CallerLookup, RegistryStore, RoutingDirectory } from '@hub/core';
import type { SchemaValidator } from '@hub/schemas';
import { locationsRouter, tariffsRouter, type ObjectRoutesDeps } from './routes/locations.ts';
import { cdrsRouter, sessionsRouter, type CdrAppendDeps } from './routes/sessions-cdrs.ts';
import { tokensRouter, type TokensDeps } from './routes/tokens.ts';
import { tokenObjectsRouter } from './routes/token-objects.ts';
import { commandCallbackRouter, commandsRouter, type CommandsDeps } from './routes/commands.ts';
import { chargingProfileCallbackRouter, chargingProfilesRouter, type ChargingProfilesDeps } from './routes/charging-profiles.ts';
import { authenticate } from './authenticate.ts';
import type { IngressDeliveries } from './ports.ts';
import type { DispatcherWait } from './known-sessions.ts';
import { errorMiddleware } from './http.ts';
import { versionEdges } from './version-edge.ts';
import { credentialsRouter } from './routes/credentials.ts';
import { hubClientInfoRouter } from './routes/hubclientinfo.ts';
import { registerVersionRoutes, type ModuleEndpoint, type ModulesByVersion } from './routes/versions.ts';

export interface IngressLimits {
  /** Largest accepted request body in bytes (README, Limits). */
  readonly maxBodyBytes: number;
  readonly defaultPageLimit: number;
  readonly maxPageLimit: number;
}

export interface IngressDeps {
  readonly callers: CallerLookup;
  readonly store: RegistryStore;
  readonly credentials: Omit<CredentialsDeps, 'store'>;
  readonly validator: SchemaValidator;
  readonly publicBaseUrl: string;
  readonly logger: Logger;
  readonly httpMetrics: HttpMetrics;
  readonly accessLog: 'all' | 'errors';
  readonly limits: IngressLimits;
  /** Called after a registry change so the outbox is published promptly. */
  readonly onRegistryChange: () => void;
  readonly objects: Omit<ObjectRoutesDeps, 'validator' | 'publicBaseUrl'>;
  readonly deliveries: IngressDeliveries;
  /** CDR appends, each CDR once in ocpi.cdrs.v1 (docs/decisions/0003-each-cdr-once.md). */
  readonly cdrs: CdrAppendDeps;
  /** Who receives what, and where (tokens and commands forwards). */
  readonly routing: RoutingDirectory;
  readonly dispatcherWait: DispatcherWait;
  readonly tokens: Omit<TokensDeps, 'validator' | 'targets' | 'readModels' | 'rateLimiter'>;
  readonly commands: Pick<CommandsDeps, 'commands' | 'policy' | 'perMinute' | 'graceSeconds' | 'responseUrlHosts'>;
  readonly chargingProfiles: Pick<ChargingProfilesDeps, 'chargingProfiles' | 'perMinute' | 'forwarded' | 'results'>;
  /** A sandbox hub marks every answer (docs/how-to/sandbox.md, Which hub am I talking to); production answers are unchanged. */
  readonly sandbox?: boolean;
}

/** The response header that tells a partner it talks to a sandbox hub (docs/reference/partner-api.md). */
export const ENVIRONMENT_HEADER = 'X-Hub-Environment';

/** The modules this ingress serves in 2.2.1: the single list behind GET /ocpi/2.2.1 and the routing below. */
const MODULES_221: readonly ModuleEndpoint[] = [
  // version_information_endpoint.asciidoc, Endpoint: SENDER is advised for one's own credentials module.
  { identifier: 'credentials', roles: ['SENDER'], path: 'credentials' },
  // mod_hub_client_info.asciidoc: the hub owns ClientInfo and implements the Sender Interface (GET);
  // the Receiver Interface is the connected parties' own, where the hub PUTs ClientInfo.
  { identifier: 'hubclientinfo', roles: ['SENDER'], path: 'hubclientinfo' },
  // CPOs push to the hub (it receives) and eMSPs pull from it (it sends): listed once per role.
  { identifier: 'locations', roles: ['SENDER', 'RECEIVER'], path: 'locations' },
  { identifier: 'tariffs', roles: ['SENDER', 'RECEIVER'], path: 'tariffs' },
  // eMSPs send commands to the hub, which forwards them (interface document, Commands). The hub is
  // no commands SENDER to list: a CPO posts its CommandResult to the response_url of each command,
  // whose structure "is open to the Sender to define" (mod_commands.asciidoc, Sender Interface).
  { identifier: 'commands', roles: ['RECEIVER'], path: 'commands' },
  // eMSPs push their tokens to the hub and ask it for real-time authorization (it receives:
  // interface document, Token authorization; mod_tokens.asciidoc, Receiver Interface); CPOs pull the
  // tokens of routed eMSPs from it and ask it for real-time authorization (it sends:
  // mod_tokens.asciidoc, Sender Interface, GET and POST authorize).
  { identifier: 'tokens', roles: ['SENDER', 'RECEIVER'], path: 'tokens' },
  // CPOs push sessions and CDRs to the hub; the hub delivers them to eMSPs (not pulled from it).
  { identifier: 'sessions', roles: ['RECEIVER'], path: 'sessions' },
  // mod_charging_profiles.asciidoc: eMSPs set, get and clear profiles at the hub (it receives, and
  // forwards to the session's CPO); CPOs push updated ActiveChargingProfiles to it (it is their
  // Sender). The SENDER endpoint has a path of its own so its PUT {session_id} is not the Receiver's.
  { identifier: 'chargingprofiles', roles: ['RECEIVER'], path: 'chargingprofiles' },
  { identifier: 'chargingprofiles', roles: ['SENDER'], path: 'chargingprofiles/sender' },
  { identifier: 'cdrs', roles: ['RECEIVER'], path: 'cdrs' },
];

/**
 * The modules served to OCPI 2.1.1 partners, translated at the edge into the one canonical form
 * (docs/decisions/0008-one-canonical-form-translated-at-the-edge.md). 2.1.1 endpoints carry no role.
 */
const MODULES_211: readonly ModuleEndpoint[] = [
  { identifier: 'credentials', roles: ['SENDER'], path: 'credentials' },
  { identifier: 'locations', roles: ['SENDER', 'RECEIVER'], path: 'locations' },
  { identifier: 'tariffs', roles: ['SENDER', 'RECEIVER'], path: 'tariffs' },
  { identifier: 'sessions', roles: ['RECEIVER'], path: 'sessions' },
  { identifier: 'cdrs', roles: ['RECEIVER'], path: 'cdrs' },
  { identifier: 'tokens', roles: ['SENDER', 'RECEIVER'], path: 'tokens' },
  { identifier: 'commands', roles: ['RECEIVER'], path: 'commands' },
];

/**
 * The modules served to OCPI 2.3.0 partners so far, translated at the edge like 2.1.1's
 * (docs/decisions/0012-ocpi-2.3.0-through-the-2.2.1-canonical-form.md); a module joins this list with
 * its mount. Roles as in 2.2.1 (ocpi-2.3.0/version_information_endpoint.asciidoc, Endpoint class).
 */
const MODULES_230: readonly ModuleEndpoint[] = [
  // ocpi-2.3.0/version_information_endpoint.asciidoc, Endpoint: SENDER is advised for one's own credentials module.
  { identifier: 'credentials', roles: ['SENDER'], path: 'credentials' },
  // ocpi-2.3.0/mod_hub_client_info.asciidoc: the hub implements the Sender interface (GET), as in 2.2.1.
  { identifier: 'hubclientinfo', roles: ['SENDER'], path: 'hubclientinfo' },
  // CPOs push to the hub (it receives) and eMSPs pull from it (it sends), as in 2.2.1.
  { identifier: 'locations', roles: ['SENDER', 'RECEIVER'], path: 'locations' },
  { identifier: 'tariffs', roles: ['SENDER', 'RECEIVER'], path: 'tariffs' },
  // CPOs push sessions and CDRs to the hub, which delivers them to eMSPs in their versions (as in 2.2.1).
  { identifier: 'sessions', roles: ['RECEIVER'], path: 'sessions' },
  { identifier: 'cdrs', roles: ['RECEIVER'], path: 'cdrs' },
  // eMSPs push tokens and ask for real-time authorization (the hub receives); CPOs pull tokens and ask
  // for real-time authorization (the hub sends), as in 2.2.1 (ocpi-2.3.0/mod_tokens.asciidoc).
  { identifier: 'tokens', roles: ['SENDER', 'RECEIVER'], path: 'tokens' },
  // eMSPs send commands to the hub, which forwards them (as in 2.2.1: no commands SENDER to list).
  { identifier: 'commands', roles: ['RECEIVER'], path: 'commands' },
  // As in 2.2.1: the Receiver for eMSPs, the Sender for CPOs on a path of its own.
  { identifier: 'chargingprofiles', roles: ['RECEIVER'], path: 'chargingprofiles' },
  { identifier: 'chargingprofiles', roles: ['SENDER'], path: 'chargingprofiles/sender' },
];

export const MODULES: ModulesByVersion = { '2.1.1': MODULES_211, '2.2.1': MODULES_221, '2.3.0': MODULES_230 };

// Long because: the ingress's route table: one line per module and OCPI version, each with a comment
// citing its chapter.
export function createIngressApp(deps: IngressDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');
  if (deps.sandbox) {
    app.use((_req, res, next) => {
      res.setHeader(ENVIRONMENT_HEADER, 'sandbox');
      next();
    });
  }
  app.use(requestContext({ logger: deps.logger, metrics: deps.httpMetrics, accessLog: deps.accessLog }));

  // Any body is read as JSON whatever its Content-Type, so a partner that forgets the header still
  // gets a precise answer; unparseable JSON is HTTP 400 (status_codes.asciidoc).
  const json = express.json({ limit: deps.limits.maxBodyBytes, strict: true, type: () => true });
  const withInitial = authenticate(deps.callers, { allowInitialToken: true, allowSuspended: true });
  // Every URL under /ocpi/{version} admits only callers the operator allowed that version.
  const withInitialIn = (version: OcpiVersion) => authenticate(deps.callers, { allowInitialToken: true, allowSuspended: true, version });
  const hubToken = authenticate(deps.callers, { allowInitialToken: false, allowSuspended: false, version: '2.2.1' });
  const hubToken230 = authenticate(deps.callers, { allowInitialToken: false, allowSuspended: false, version: '2.3.0' });

  registerVersionRoutes(app, deps.publicBaseUrl, MODULES, withInitial, withInitialIn);
  const credentialsDeps = { ...deps.credentials, store: deps.store, validator: deps.validator, onChange: deps.onRegistryChange };
  app.use('/ocpi/2.2.1/credentials', withInitialIn('2.2.1'), json, credentialsRouter(credentialsDeps, '2.2.1'));
  app.use('/ocpi/2.1.1/credentials', withInitialIn('2.1.1'), json, credentialsRouter(credentialsDeps, '2.1.1'));
  app.use('/ocpi/2.3.0/credentials', withInitialIn('2.3.0'), json, credentialsRouter(credentialsDeps, '2.3.0'));
  app.use(
    '/ocpi/2.2.1/hubclientinfo',
    hubToken,
    hubClientInfoRouter({
      store: deps.store,
      publicBaseUrl: deps.publicBaseUrl,
      limits: { defaultLimit: deps.limits.defaultPageLimit, maxLimit: deps.limits.maxPageLimit },
    }),
  );
  // ocpi-2.3.0/mod_hub_client_info.asciidoc: the same Sender interface; a ClientInfo is the same object in 2.3.0.
  app.use(
    '/ocpi/2.3.0/hubclientinfo',
    hubToken230,
    hubClientInfoRouter({ store: deps.store, publicBaseUrl: deps.publicBaseUrl, limits: { defaultLimit: deps.limits.defaultPageLimit, maxLimit: deps.limits.maxPageLimit } }),
  );
  const objects: ObjectRoutesDeps = { ...deps.objects, validator: deps.validator, publicBaseUrl: deps.publicBaseUrl };
  const edges = versionEdges(deps.validator, deps.credentials.hub);
  app.use('/ocpi/2.2.1/locations', hubToken, json, locationsRouter(objects, edges['2.2.1']));
  app.use('/ocpi/2.2.1/tariffs', hubToken, json, tariffsRouter(objects, edges['2.2.1']));
  // OCPI 2.1.1: a CPO pushes to {cc}/{pid}/{id} (the eMSP interface, mod_locations.md 3.2) and an eMSP
  // pulls the list (the CPO interface, mod_locations.md 3.1.1), through the same routes.
  const hubToken211 = authenticate(deps.callers, { allowInitialToken: false, allowSuspended: false, version: '2.1.1' });
  app.use('/ocpi/2.1.1/locations', hubToken211, json, locationsRouter(objects, edges['2.1.1']));
  app.use('/ocpi/2.1.1/tariffs', hubToken211, json, tariffsRouter(objects, edges['2.1.1']));
  // OCPI 2.3.0: the 2.2.1 interfaces (ocpi-2.3.0/mod_locations.asciidoc), bodies translated by the 2.3.0 edge.
  app.use('/ocpi/2.3.0/locations', hubToken230, json, locationsRouter(objects, edges['2.3.0']));
  // ocpi-2.3.0/mod_tariffs.asciidoc: a 2.3.0 CPO pushes (PUT, DELETE) and a 2.3.0 eMSP pulls as in 2.2.1;
  // tax_included is kept for 2.3.0 readers (ADR 0012).
  app.use('/ocpi/2.3.0/tariffs', hubToken230, json, tariffsRouter(objects, edges['2.3.0']));
  const sessionCdrDeps = { eventLog: deps.objects.eventLog, readModels: deps.objects.readModels, deliveries: deps.deliveries, validator: deps.validator, publicBaseUrl: deps.publicBaseUrl, dispatcherWait: deps.dispatcherWait };
  app.use('/ocpi/2.2.1/sessions', hubToken, json, sessionsRouter(sessionCdrDeps, edges['2.2.1']));
  app.use('/ocpi/2.2.1/cdrs', hubToken, json, cdrsRouter({ ...sessionCdrDeps, cdrs: deps.cdrs }, edges['2.2.1']));
  // A 2.1.1 CPO pushes sessions and posts CDRs to the eMSP interface (mod_sessions.md 2.2, mod_cdrs.md 2.2).
  app.use('/ocpi/2.1.1/sessions', hubToken211, json, sessionsRouter(sessionCdrDeps, edges['2.1.1']));
  app.use('/ocpi/2.1.1/cdrs', hubToken211, json, cdrsRouter({ ...sessionCdrDeps, cdrs: deps.cdrs }, edges['2.1.1']));
  // A 2.3.0 CPO pushes sessions and posts CDRs as in 2.2.1 (ocpi-2.3.0/mod_sessions.asciidoc and
  // mod_cdrs.asciidoc, Receiver Interface); the 2.3.0 edge translates its Prices (ADR 0012).
  app.use('/ocpi/2.3.0/sessions', hubToken230, json, sessionsRouter(sessionCdrDeps, edges['2.3.0']));
  app.use('/ocpi/2.3.0/cdrs', hubToken230, json, cdrsRouter({ ...sessionCdrDeps, cdrs: deps.cdrs }, edges['2.3.0']));
  const commandsDeps: CommandsDeps = {
    ...deps.commands,
    targets: deps.routing,
    deliveries: deps.deliveries,
    readModels: deps.objects.readModels,
    eventLog: deps.objects.eventLog,
    realtime: deps.tokens.realtime,
    cipher: deps.tokens.cipher,
    rateLimiter: deps.objects.rateLimiter,
    validator: deps.validator,
    publicBaseUrl: deps.publicBaseUrl,
    registeredHosts: (platformId) => deps.commands.commands.registeredHosts(platformId),
  };
  // The callback takes no authentication (interface document, Authentication 1): mounted first.
  app.use('/ocpi/2.2.1/commands/callback', json, commandCallbackRouter(commandsDeps, edges['2.2.1']));
  app.use('/ocpi/2.2.1/commands', hubToken, json, commandsRouter(commandsDeps, edges['2.2.1']));
  // OCPI 2.1.1: an eMSP sends commands to the CPO interface; a 2.1.1 CPO posts its result to the hub's
  // 2.1.1 callback (mod_commands.md, 2.1.1).
  app.use('/ocpi/2.1.1/commands/callback', json, commandCallbackRouter(commandsDeps, edges['2.1.1']));
  app.use('/ocpi/2.1.1/commands', hubToken211, json, commandsRouter(commandsDeps, edges['2.1.1']));
  // A 2.3.0 CPO gets commands from eMSPs of other versions and posts its CommandResult to the hub's
  // callback of its own version (ocpi-2.3.0/mod_commands.asciidoc, CommandResult): the response_url
  // the commands route gives it.
  app.use('/ocpi/2.3.0/commands/callback', json, commandCallbackRouter(commandsDeps, edges['2.3.0']));
  // A 2.3.0 eMSP sends the five commands to the hub as in 2.2.1 (ocpi-2.3.0/mod_commands.asciidoc,
  // Receiver Interface); each reaches its CPO in the CPO's version.
  app.use('/ocpi/2.3.0/commands', hubToken230, json, commandsRouter(commandsDeps, edges['2.3.0']));
  const chargingProfilesDeps: ChargingProfilesDeps = {
    ...deps.chargingProfiles,
    targets: deps.routing,
    deliveries: deps.deliveries,
    eventLog: deps.objects.eventLog,
    realtime: deps.tokens.realtime,
    cipher: deps.tokens.cipher,
    rateLimiter: deps.objects.rateLimiter,
    validator: deps.validator,
    publicBaseUrl: deps.publicBaseUrl,
    policy: deps.commands.policy,
    // The response_url rules and the CPO's grace are the commands' (mod_charging_profiles.asciidoc,
    // Flow: "similar to the Commands module").
    graceSeconds: deps.commands.graceSeconds,
    responseUrlHosts: deps.commands.responseUrlHosts,
    registeredHosts: (platformId) => deps.commands.commands.registeredHosts(platformId),
  };
  app.use('/ocpi/2.2.1/chargingprofiles/callback', json, chargingProfileCallbackRouter(chargingProfilesDeps));
  app.use('/ocpi/2.2.1/chargingprofiles', hubToken, json, chargingProfilesRouter(chargingProfilesDeps));
  // ocpi-2.3.0/mod_charging_profiles.asciidoc: the same interfaces and objects; a 2.3.0 CPO posts its
  // result to the 2.3.0 callback (the response_url the hub gives it).
  app.use('/ocpi/2.3.0/chargingprofiles/callback', json, chargingProfileCallbackRouter(chargingProfilesDeps, '2.3.0'));
  app.use('/ocpi/2.3.0/chargingprofiles', hubToken230, json, chargingProfilesRouter(chargingProfilesDeps, '2.3.0'));
  // In 2.1.1 an eMSP pushes tokens to the CPO interface and a CPO pulls them from the eMSP interface
  // and asks it for real-time authorization (mod_tokens.md, 2.1.1).
  const tokensDeps = { ...deps.tokens, validator: deps.validator, targets: deps.routing, readModels: deps.objects.readModels, rateLimiter: deps.objects.rateLimiter };
  // A 2.3.0 eMSP and CPO use the 2.2.1 interfaces (ocpi-2.3.0/mod_tokens.asciidoc), through the 2.3.0 edge.
  for (const [version, guard] of [['2.2.1', hubToken], ['2.1.1', hubToken211], ['2.3.0', hubToken230]] as const) {
    app.use(`/ocpi/${version}/tokens`, guard, json, tokensRouter(tokensDeps, edges[version]), tokenObjectsRouter({ ...objects, targets: deps.routing, hub: deps.credentials.hub }, edges[version]));
  }
  app.use(() => {
    throw new HubError('NOT_FOUND');
  });
  app.use(errorMiddleware());
  return app;
}
