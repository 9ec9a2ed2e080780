import { Router, type Request } from 'express';
import { HubError } from '@hub/ocpi';
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

// Credentials module (OCPI 2.2.1 credentials.asciidoc; interface document, Credentials).

export function credentialsRouter(deps: CredentialsDeps & { validator: SchemaValidator; onChange: () => void }): Router {
  const router = Router();
  const ids = (req: Request) => ({ requestId: req.ctx.requestId, correlationId: req.ctx.correlationId });
  const body = (req: Request): CredentialsBody => {
    const violations = deps.validator.validate('ocpi/credentials.json', req.body);
    if (violations.length > 0) {
      throw new HubError('INVALID_PARAMETERS', { detail: violations.map((v) => `${v.path} ${v.message}`).join('; '), data: violations });
    }
    return req.body as CredentialsBody;
  };

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
