import type { Express, RequestHandler } from 'express';
import { OCPI_VERSIONS, type InterfaceRole, type OcpiVersion } from '@hub/ocpi';
import { methodNotAllowed, okPreserialized } from '@hub/modules/http';
import { adapterFor, type VersionDetails } from '@hub/versions';

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
 * 2.1.1 endpoints carry no role (version_information_endpoint.md, Endpoint class): a partner reads each
 * as the other side's interface of that module, so a 2.1.1 party is shown only the hub's endpoints of
 * the interface its counterpart has (versionDetailsOut of v2.1.1): an eMSP is not shown the hub's
 * sessions and cdrs, which only receive CPO pushes (it would pull them and get 405). A platform with
 * CPO and eMSP parties is shown both; one with neither role, everything the hub serves.
 */
function versionDetails211(publicBaseUrl: string, modules: readonly ModuleEndpoint[], roles: readonly string[]) {
  const shown = (['CPO', 'EMSP'] as const).filter((role) => roles.includes(role));
  if (shown.length === 0) return versionDetails(publicBaseUrl, '2.1.1', modules);
  const withRoles = { version: '2.1.1', endpoints: modules.flatMap((m) => m.roles.map((role) => ({ identifier: m.identifier, role, url: `${publicBaseUrl}/ocpi/2.1.1/${m.path}` }))) } as unknown as VersionDetails;
  const listed = new Set(shown.flatMap((role) => (adapterFor('2.1.1').versionDetailsOut(withRoles, role) as { endpoints: Array<{ identifier: string }> }).endpoints.map((e) => e.identifier)));
  // In the hub's module order, as the other versions list them.
  return { version: '2.1.1', endpoints: modules.filter((m) => listed.has(m.identifier)).map((m) => ({ identifier: m.identifier, url: `${publicBaseUrl}/ocpi/2.1.1/${m.path}` })) };
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
    if (version === '2.1.1') {
      const byRoles = new Map<string, string>();
      app.get(`/ocpi/${version}`, guard(version), (req, res) => {
        const roles = [...new Set(req.caller.parties.map((p) => p.role))].sort();
        const key = roles.join(',');
        let json = byRoles.get(key);
        if (json === undefined) byRoles.set(key, (json = JSON.stringify(versionDetails211(publicBaseUrl, modules[version], roles))));
        okPreserialized(res, json);
      });
      continue;
    }
    const detailsJson = JSON.stringify(versionDetails(publicBaseUrl, version, modules[version]));
    app.get(`/ocpi/${version}`, guard(version), (_req, res) => okPreserialized(res, detailsJson));
  }
  // route().all() is one catch-all layer (app.all would register every method name one by one).
  app.route(['/ocpi/versions', ...OCPI_VERSIONS.map((v) => `/ocpi/${v}`)]).all(methodNotAllowed(['GET', 'HEAD']));
}
