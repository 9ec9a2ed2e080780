import { Router, type Request } from 'express';
import {
  currentCredentials,
  deleteCredentials,
  registerCredentials,
  updateCredentials,
  type CredentialsBody,
  type CredentialsDeps,
} from '@hub/registry';
import type { SchemaValidator } from '@hub/schemas';
import { handle, ok, okEmpty } from '../http.ts';
import { refuseOtherMethods } from '../method-not-allowed.ts';
import { validateBody } from '../ocpi-objects.ts';

// Credentials module (OCPI 2.2.1 credentials.asciidoc; interface document, Credentials).

export function credentialsRouter(deps: CredentialsDeps & { validator: SchemaValidator; onChange: () => void }): Router {
  const router = Router();
  const ids = (req: Request) => ({ requestId: req.ctx.requestId, correlationId: req.ctx.correlationId });
  const body = (req: Request): CredentialsBody => validateBody(deps.validator, 'ocpi/credentials.json', req.body);

  router.get('/', (req, res) => ok(res, currentCredentials(deps, req.presentedToken)));
  router.post(
    '/',
    handle(async (req, res) => {
      const credentials = await registerCredentials(deps, req.caller, body(req), ids(req));
      deps.onChange();
      ok(res, credentials);
    }),
  );
  router.put(
    '/',
    handle(async (req, res) => {
      const credentials = await updateCredentials(deps, req.caller, body(req), ids(req));
      deps.onChange();
      ok(res, credentials);
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
