import { handle, ok } from '../http/answers.ts';
import { parsePage, setPageHeaders } from '../http/pagination.ts';
import type { ModuleRoutes } from '../http/mounts.ts';

// HubClientInfo (OCPI 2.2.1 mod_hub_client_info.asciidoc, Sender interface: GET, paginated): the
// caller's own parties and the parties it has an active routing rule with. It reads no body, so its
// mount parses none (http/mounts.ts: only routes with a declared body do).

export const hubClientInfoRoutes: ModuleRoutes = (deps) => {
  const limits = { defaultLimit: deps.limits.defaultPageLimit, maxLimit: deps.limits.maxPageLimit };
  return {
    'GET hubclientinfo': handle(async (req, res) => {
      const page = parsePage(req, limits);
      const result = await deps.store.clientInfo(req.caller.platformId, page);
      setPageHeaders(res, page, result.total, result.items.length, {
        publicUrl: `${deps.publicBaseUrl}${req.originalUrl}`,
      });
      ok(res, result.items);
    }),
  };
};
