import type { Express, RequestHandler } from 'express';
import { OCPI_VERSION, type InterfaceRole } from '@hub/ocpi';
import { okPreserialized } from '../http.ts';
import { methodNotAllowed } from '../method-not-allowed.ts';

// Versions (OCPI 2.2.1 version_information_endpoint.asciidoc; interface document, Versions): both
// require authentication here; the initial token may call them (transport_and_format.asciidoc).

export interface ModuleEndpoint {
  readonly identifier: string;
  readonly roles: readonly InterfaceRole[];
  /** Path below /ocpi/2.2.1 */
  readonly path: string;
}

/**
 * Registers both routes on the application itself rather than a nested router: version details are
 * what every partner fetches first and most, and a nested router costs a dispatch per request.
 */
export function registerVersionRoutes(app: Express, publicBaseUrl: string, modules: readonly ModuleEndpoint[], auth: RequestHandler): void {
  const versions = [{ version: OCPI_VERSION, url: `${publicBaseUrl}/ocpi/${OCPI_VERSION}` }];
  // A module the hub serves as both SENDER and RECEIVER is listed twice (interface document,
  // Version and endpoint lists).
  const details = {
    version: OCPI_VERSION,
    endpoints: modules.flatMap((m) =>
      m.roles.map((role) => ({ identifier: m.identifier, role, url: `${publicBaseUrl}/ocpi/${OCPI_VERSION}/${m.path}` })),
    ),
  };
  const versionsJson = JSON.stringify(versions);
  const detailsJson = JSON.stringify(details);
  app.get('/ocpi/versions', auth, (_req, res) => okPreserialized(res, versionsJson));
  app.get(`/ocpi/${OCPI_VERSION}`, auth, (_req, res) => okPreserialized(res, detailsJson));
  // route().all() is one catch-all layer (app.all would register every method name one by one).
  app.route(['/ocpi/versions', `/ocpi/${OCPI_VERSION}`]).all(methodNotAllowed(['GET', 'HEAD']));
}
