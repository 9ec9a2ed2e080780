import express, { type Express } from 'express';
import { HubError, OCPI_VERSIONS, type OcpiVersion } from '@hub/ocpi';
import { modulesServedIn, type ModuleId } from '@hub/modules';
import { requestContext, type HttpMetrics, type Logger } from '@hub/observability';
import type { CredentialsDeps } from '@hub/registry';
import type { CallerLookup } from '@hub/core';
import { moduleRoutes, mountsOf, responseRoutingHeaders, versionEdges, type ModuleRouteDeps } from '@hub/modules/http';
import { authenticate } from './authenticate.ts';
import { errorMiddleware } from './http.ts';
import { credentialsRouter } from './routes/credentials.ts';
import { registerVersionRoutes, type ModuleEndpoint, type ModulesByVersion } from './routes/versions.ts';

export interface IngressLimits {
  /** Largest accepted request body in bytes (README, Limits). */
  readonly maxBodyBytes: number;
  readonly defaultPageLimit: number;
  readonly maxPageLimit: number;
}

/** The app's ports and settings: the module routes' (ModuleRouteDeps, @hub/modules/http) and the hub's own. */
export interface IngressDeps extends ModuleRouteDeps {
  readonly callers: CallerLookup;
  readonly credentials: Omit<CredentialsDeps, 'store'>;
  readonly logger: Logger;
  readonly httpMetrics: HttpMetrics;
  readonly accessLog: 'all' | 'errors';
  readonly limits: IngressLimits;
  /** Called after a registry change so the outbox is published promptly. */
  readonly onRegistryChange: () => void;
  /** A sandbox hub marks every answer (docs/how-to/sandbox.md, Which hub am I talking to); production answers are unchanged. */
  readonly sandbox?: boolean;
}

/** The response header that tells a partner it talks to a sandbox hub (docs/reference/partner-api.md). */
export const ENVIRONMENT_HEADER = 'X-Hub-Environment';

/**
 * The hub's own endpoint in every version: credentials (version_information_endpoint.asciidoc,
 * Endpoint: SENDER is advised for one's own credentials module). The object modules' endpoints are
 * declared in their folders (@hub/modules, `http.endpoints`); 2.1.1 and 2.3.0 partners are translated
 * at the edge into the one canonical form (docs/decisions/0008, 0012).
 */
const CREDENTIALS: ModuleEndpoint = { identifier: 'credentials', roles: ['SENDER'], path: 'credentials' };

function endpointsIn(version: OcpiVersion): readonly ModuleEndpoint[] {
  return [CREDENTIALS, ...modulesServedIn(version).flatMap((m) => (m.http.endpoints[version] ?? []).map((e) => ({ identifier: m.id, ...e })))];
}

const MOUNT_ORDER: readonly OcpiVersion[] = ['2.2.1', ...OCPI_VERSIONS.filter((v) => v !== '2.2.1')];

/** The modules this ingress serves in each version: the single list behind GET /ocpi/{version} and the mounts below. */
export const MODULES: ModulesByVersion = { '2.1.1': endpointsIn('2.1.1'), '2.2.1': endpointsIn('2.2.1'), '2.3.0': endpointsIn('2.3.0') };

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
  registerVersionRoutes(app, deps.publicBaseUrl, MODULES, withInitial, withInitialIn);
  const credentialsDeps = { ...deps.credentials, store: deps.store, validator: deps.validator, onChange: deps.onRegistryChange };
  const edges = versionEdges(deps.validator, deps.credentials.hub);
  // 2.2.1 first: the canonical version most partners speak; express tries mounts in order.
  for (const version of MOUNT_ORDER) {
    app.use(`/ocpi/${version}/credentials`, withInitialIn(version), json, credentialsRouter(credentialsDeps, version));
    const hubToken = authenticate(deps.callers, { allowInitialToken: false, allowSuspended: false, version });
    // The answers of functional modules carry the routing headers (routing-headers.ts); 2.1.1 has none.
    const routing = version === '2.1.1' ? [] : [responseRoutingHeaders(deps.credentials.hub)];
    for (const module of modulesServedIn(version)) {
      for (const mount of mountsOf(module, version, moduleRoutes[module.id as ModuleId](deps, version, edges[version]))) {
        app.use(`/ocpi/${version}/${mount.path}`, ...(mount.authenticated ? [hubToken] : []), ...routing, ...(mount.json ? [json] : []), ...mount.handlers);
      }
    }
  }
  app.use(() => {
    throw new HubError('NOT_FOUND');
  });
  app.use(errorMiddleware());
  return app;
}
