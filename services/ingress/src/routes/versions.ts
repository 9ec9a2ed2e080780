import type { Express, RequestHandler } from 'express';
import { OCPI_VERSIONS, type InterfaceRole, type OcpiVersion } from '@hub/ocpi';
import { methodNotAllowed, okPreserialized } from '@hub/modules/http';

// Versions (OCPI 2.2.1 version_information_endpoint.asciidoc, 2.1.1 version_information_endpoint.md;
// interface document, Versions): both require authentication here; the initial token may call them
// (transport_and_format.asciidoc). Each caller sees the versions the operator allowed it.

export interface ModuleEndpoint {
  readonly identifier: string;
  readonly roles: readonly InterfaceRole[];
  /** Path below /ocpi/{version} */
  readonly path: string;
}

/** The modules the hub serves in each version: the single list behind GET /ocpi/{version} and the mounts. */
export type ModulesByVersion = Readonly<Record<OcpiVersion, readonly ModuleEndpoint[]>>;

function versionDetails(publicBaseUrl: string, version: OcpiVersion, modules: readonly ModuleEndpoint[]) {
  const url = (m: ModuleEndpoint) => `${publicBaseUrl}/ocpi/${version}/${m.path}`;
  // version_information_endpoint.md (2.1.1), Endpoint class: identifier and url, no role; a module
  // is listed once (the hub's 2.1.1 interfaces of a module share one URL).
  if (version === '2.1.1') return { version, endpoints: modules.map((m) => ({ identifier: m.identifier, url: url(m) })) };
  // A module the hub serves as both SENDER and RECEIVER is listed twice (interface document,
  // Version and endpoint lists).
  return { version, endpoints: modules.flatMap((m) => m.roles.map((role) => ({ identifier: m.identifier, role, url: url(m) }))) };
}

/**
 * Registers the routes on the application itself rather than a nested router: version details are
 * what every partner fetches first and most, and a nested router costs a dispatch per request.
 * `guard(version)` authenticates and admits only callers allowed that version.
 */
export function registerVersionRoutes(app: Express, publicBaseUrl: string, modules: ModulesByVersion, auth: RequestHandler, guard: (version: OcpiVersion) => RequestHandler): void {
  const listJson = new Map<string, string>();
  const versionsOf = (allowed: readonly OcpiVersion[]) => {
    const key = allowed.join(',');
    let json = listJson.get(key);
    if (json === undefined) {
      json = JSON.stringify(OCPI_VERSIONS.filter((v) => allowed.includes(v)).map((version) => ({ version, url: `${publicBaseUrl}/ocpi/${version}` })));
      listJson.set(key, json);
    }
    return json;
  };
  app.get('/ocpi/versions', auth, (req, res) => okPreserialized(res, versionsOf(req.caller.versions)));
  for (const version of OCPI_VERSIONS) {
    const detailsJson = JSON.stringify(versionDetails(publicBaseUrl, version, modules[version]));
    app.get(`/ocpi/${version}`, guard(version), (_req, res) => okPreserialized(res, detailsJson));
  }
  // route().all() is one catch-all layer (app.all would register every method name one by one).
  app.route(['/ocpi/versions', ...OCPI_VERSIONS.map((v) => `/ocpi/${v}`)]).all(methodNotAllowed(['GET', 'HEAD']));
}
