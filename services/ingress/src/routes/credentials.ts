import { Router, type Request } from 'express';
import type { OcpiVersion } from '@hub/ocpi';
import {
  currentCredentials,
  deleteCredentials,
  registerCredentials,
  updateCredentials,
  type CredentialsBody,
  type CredentialsDeps,
  type HubCredentials,
} from '@hub/registry';
import type { SchemaValidator } from '@hub/schemas';
import { adapterFor } from '@hub/versions';
import { handle, ok, okEmpty } from '../http.ts';
import { refuseOtherMethods } from '../method-not-allowed.ts';
import { validateBody, type OcpiBodies } from '../ocpi-objects.ts';

// Credentials module (OCPI 2.2.1 credentials.asciidoc, 2.1.1 credentials.md; interface document,
// Credentials). The exchange is the same in both versions; only the Credentials object differs.

export function credentialsRouter(deps: CredentialsDeps & { validator: SchemaValidator; onChange: () => void }, version: OcpiVersion): Router {
  const router = Router();
  // The version's Credentials object, to and from the 2.2.1 one the registry works with (@hub/versions):
  // a 2.1.1 one names one party and no role, the role the operator registered (credentials.md 2.1).
  const adapter = adapterFor(version);
  const ids = (req: Request) => ({ requestId: req.ctx.requestId, correlationId: req.ctx.correlationId });
  const body = (req: Request): CredentialsBody =>
    adapter.credentialsIn(validateBody(deps.validator, adapter.schemaId('credentials') as keyof OcpiBodies, req.body), req.caller.parties[0]?.role ?? 'CPO');
  // The hub's credentials are a 2.2.1 Credentials object with one (read-only) role: HUB.
  const answer = (hub: HubCredentials) => adapter.credentialsOut(hub as unknown as CredentialsBody);

  router.get('/', (req, res) => ok(res, answer(currentCredentials(deps, req.presentedToken))));
  router.post(
    '/',
    handle(async (req, res) => {
      const credentials = await registerCredentials(deps, req.caller, body(req), ids(req), version);
      deps.onChange();
      ok(res, answer(credentials));
    }),
  );
  router.put(
    '/',
    handle(async (req, res) => {
      const credentials = await updateCredentials(deps, req.caller, body(req), ids(req), version);
      deps.onChange();
      ok(res, answer(credentials));
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
