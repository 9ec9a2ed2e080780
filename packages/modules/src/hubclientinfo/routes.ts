import { Router } from 'express';
import type { RegistryStore } from '@hub/core';
import { handle, ok } from '../http/answers.ts';
import { refuseOtherMethods } from '../http/method-not-allowed.ts';
import { parsePage, setPageHeaders } from '../http/pagination.ts';
import type { ModuleMounts } from '../http/mounts.ts';

// HubClientInfo (OCPI 2.2.1 mod_hub_client_info.asciidoc, Sender interface: GET, paginated): the
// caller's own parties and the parties it has an active routing rule with.

export function hubClientInfoRouter(deps: {
  store: RegistryStore;
  publicBaseUrl: string;
  limits: { defaultLimit: number; maxLimit: number };
}): Router {
  const router = Router();
  router.get(
    '/',
    handle(async (req, res) => {
      const page = parsePage(req, deps.limits);
      const result = await deps.store.clientInfo(req.caller.platformId, page);
      setPageHeaders(res, page, result.total, result.items.length, {
        publicUrl: `${deps.publicBaseUrl}${req.originalUrl}`,
      });
      ok(res, result.items);
    }),
  );
  return refuseOtherMethods(router);
}

// The hub's Sender interface of ClientInfo reads no body (mod_hub_client_info.asciidoc, GET).
export const hubClientInfoMounts: ModuleMounts = (deps) => [
  {
    path: 'hubclientinfo',
    authenticated: true,
    json: false,
    handlers: [hubClientInfoRouter({ store: deps.store, publicBaseUrl: deps.publicBaseUrl, limits: { defaultLimit: deps.limits.defaultPageLimit, maxLimit: deps.limits.maxPageLimit } })],
  },
];
