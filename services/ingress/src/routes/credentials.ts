import { Router, type Request } from 'express';
import type { OcpiVersion } from '@hub/ocpi';
import {
  currentCredentials,
  deleteCredentials,
  registerCredentials,
  updateCredentials,
  type Caller,
  type CredentialsBody,
  type CredentialsDeps,
  type HubCredentials,
} from '@hub/registry';
import type { SchemaValidator } from '@hub/schemas';
import type { Credentials as Credentials211 } from '@hub/schemas/generated/ocpi-2.1.1/credentials';
import { handle, ok, okEmpty } from '../http.ts';
import { refuseOtherMethods } from '../method-not-allowed.ts';
import { validateBody, type OcpiBodies } from '../ocpi-objects.ts';

// Credentials module (OCPI 2.2.1 credentials.asciidoc, 2.1.1 credentials.md; interface document,
// Credentials). The exchange is the same in both versions; only the Credentials object differs.

/** How a version's Credentials object maps to the 2.2.1 one the registry works with, both ways. */
interface CredentialsForm {
  readonly schema: keyof OcpiBodies;
  toCanonical(body: unknown, caller: Caller): CredentialsBody;
  fromCanonical(hub: HubCredentials): unknown;
}

const forms: Record<OcpiVersion, CredentialsForm> = {
  '2.2.1': { schema: 'ocpi/credentials.json', toCanonical: (body) => body as CredentialsBody, fromCanonical: (hub) => hub },
  // credentials.md (2.1.1), 2.1 Credentials object: one party, no roles. Its role is the one the
  // operator registered (a 2.1.1 platform holds one party: @hub/registry versions.ts).
  '2.1.1': {
    schema: 'ocpi-2.1.1/credentials.json',
    toCanonical(body, caller) {
      const c = body as Credentials211;
      const role = caller.parties[0]?.role ?? 'CPO';
      return { token: c.token, url: c.url, roles: [{ role, party_id: c.party_id, country_code: c.country_code, business_details: c.business_details }] };
    },
    fromCanonical(hub) {
      const [self] = hub.roles;
      return { token: hub.token, url: hub.url, business_details: self?.business_details, party_id: self?.party_id, country_code: self?.country_code };
    },
  },
};

export function credentialsRouter(deps: CredentialsDeps & { validator: SchemaValidator; onChange: () => void }, version: OcpiVersion): Router {
  const router = Router();
  const form = forms[version];
  const ids = (req: Request) => ({ requestId: req.ctx.requestId, correlationId: req.ctx.correlationId });
  const body = (req: Request): CredentialsBody => form.toCanonical(validateBody(deps.validator, form.schema, req.body), req.caller);

  router.get('/', (req, res) => ok(res, form.fromCanonical(currentCredentials(deps, req.presentedToken))));
  router.post(
    '/',
    handle(async (req, res) => {
      const credentials = await registerCredentials(deps, req.caller, body(req), ids(req), version);
      deps.onChange();
      ok(res, form.fromCanonical(credentials));
    }),
  );
  router.put(
    '/',
    handle(async (req, res) => {
      const credentials = await updateCredentials(deps, req.caller, body(req), ids(req), version);
      deps.onChange();
      ok(res, form.fromCanonical(credentials));
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
