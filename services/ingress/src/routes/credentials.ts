import { Router, type Request } from 'express';
import type { OcpiVersion } from '@hub/ocpi';
import {
  currentCredentials,
  deleteCredentials,
  registerCredentials,
  updateCredentials,
  withReachableParties,
  type CredentialsBody,
  type CredentialsDeps,
  type HubCredentials,
} from '@hub/registry';
import type { SchemaValidator } from '@hub/schemas';
import { adapterFor } from '@hub/versions';
import { handle, ok, okEmpty, refuseOtherMethods, validateBody, type OcpiBodies } from '@hub/modules/http';

// Credentials module (OCPI 2.2.1 credentials.asciidoc, 2.1.1 credentials.md, 2.3.0 credentials.asciidoc;
// interface document, Credentials). The exchange is the same in every version; only the Credentials object differs.

export function credentialsRouter(deps: CredentialsDeps & { validator: SchemaValidator; onChange: () => void }, version: OcpiVersion): Router {
  const router = Router();
  // The version's Credentials object, to and from the 2.2.1 one the registry works with (@hub/versions):
  // a 2.1.1 one names one party and no role, the role the operator registered (credentials.md 2.1).
  const adapter = adapterFor(version);
  const ids = (req: Request) => ({ requestId: req.ctx.requestId, correlationId: req.ctx.correlationId });
  const body = (req: Request): CredentialsBody =>
    adapter.credentialsIn(validateBody(deps.validator, adapter.schemaId('credentials') as keyof OcpiBodies, req.body), req.caller.parties[0]?.role ?? 'CPO');
  // The hub's credentials are a 2.2.1 Credentials object with one (read-only) role: HUB. In 2.3.0 the hub
  // names itself in hub_party_id and lists the parties reachable through it that the caller is routed
  // to (ocpi-2.3.0/credentials.asciidoc, Credentials object): the adapter turns the HUB role into hub_party_id.
  const answer = async (req: Request, hub: HubCredentials) =>
    adapter.credentialsOut((version === '2.3.0' ? await withReachableParties(deps.store, req.caller, hub) : hub) as unknown as CredentialsBody);

  router.get('/', handle(async (req, res) => ok(res, await answer(req, currentCredentials(deps, req.presentedToken)))));
  router.post(
    '/',
    handle(async (req, res) => {
      const credentials = await registerCredentials(deps, req.caller, body(req), ids(req), version);
      deps.onChange();
      ok(res, await answer(req, credentials));
    }),
  );
  router.put(
    '/',
    handle(async (req, res) => {
      const credentials = await updateCredentials(deps, req.caller, body(req), ids(req), version);
      deps.onChange();
      ok(res, await answer(req, credentials));
    }),
  );
  router.delete(
    '/',
    handle(async (req, res) => {
      await deleteCredentials(deps, req.caller, ids(req));
      deps.onChange();
      okEmpty(res);
    }),
  );
  return refuseOtherMethods(router);
}
