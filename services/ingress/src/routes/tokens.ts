import { Router, type Request, type Response } from 'express';
import { HubError, isSuccessCode, partyKey, sameParty, type PartyRef } from '@hub/ocpi';
import type { OcpiPartnerClient } from '@hub/partners';
import { cachedLookup, PartnerCallError, type RoutingDirectory, type RoutingTarget, type TokenCipher } from '@hub/registry';
import type { SchemaValidator } from '@hub/schemas';
import type { RateLimiter } from '@hub/store';
import type { Counter } from '@hub/observability';
import { handle, send } from '../http.ts';
import { refuseOtherMethods } from '../method-not-allowed.ts';
import { objectPath, refuseEmptySegments, validateBody } from '../ocpi-objects.ts';
import type { LocationReferences } from '@hub/schemas/generated/ocpi/location_references';
import { success } from '@hub/ocpi';
import type { ReadModelReads } from '../ports.ts';

// Real-time token authorization (interface document, Token authorization, Errors, Limits): the eMSP
// asks the hub, the hub forwards at once to the CPO that owns the location and returns the CPO's
// answer unchanged. A CPO that cannot be reached, times out or answers garbage yields UNKNOWN.

export interface TokensDeps {
  readonly realtime: OcpiPartnerClient;
  readonly cipher: TokenCipher;
  readonly targets: RoutingDirectory;
  readonly readModels: Pick<ReadModelReads, 'locationOwners'>;
  readonly rateLimiter: RateLimiter;
  readonly validator: SchemaValidator;
  readonly perMinute: number;
  readonly outcomes: Counter<'outcome'>;
}

const ALLOWED = new Set(['ALLOWED', 'BLOCKED', 'EXPIRED', 'NO_CREDIT', 'NOT_ALLOWED', 'UNKNOWN']);

function header(req: Request, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' && v.trim() ? v.trim().toUpperCase() : undefined;
}

/** The CPO: OCPI-to headers when present (transport_and_format.asciidoc, routing headers), else the location's owner. */
async function targetCpo(deps: TokensDeps, req: Request, emsp: PartyRef, body: LocationReferences | undefined): Promise<PartyRef> {
  const toCc = header(req, 'ocpi-to-country-code');
  const toPid = header(req, 'ocpi-to-party-id');
  if (toCc && toPid) return { countryCode: toCc, partyId: toPid };
  const locationId = body?.location_id;
  if (!locationId) throw new HubError('NOT_ENOUGH_INFORMATION', { detail: 'name the CPO in the OCPI-to-country-code/OCPI-to-party-id headers or give a location_id' });
  const owners = await deps.readModels.locationOwners(locationId, emsp);
  if (owners.length === 0) throw new HubError('UNKNOWN_LOCATION_PUSH', { detail: `no routed CPO has location ${locationId}` });
  if (owners.length > 1) throw new HubError('NOT_ENOUGH_INFORMATION', { detail: `several CPOs have location ${locationId}: name one in the OCPI-to headers` });
  return owners[0] as PartyRef;
}

export function tokensRouter(deps: TokensDeps): Router {
  const router = Router();
  router.use(refuseEmptySegments(['country_code', 'party_id', 'token_uid']));
  // A usable CPO endpoint is kept for 2 s (a driver is waiting; the same pairs repeat). A failed
  // lookup is never kept, so a fixed routing rule or URL applies at once; a disabled one within 2 s.
  const targets = cachedLookup(
    2_000,
    ({ cpo, emsp }: { cpo: PartyRef; emsp: PartyRef }) => deps.targets.receiverTarget('CPO', 'tokens', emsp, cpo),
    ({ cpo, emsp }) => `${partyKey(emsp)}|${partyKey(cpo)}`,
    (t) => t.ok,
  );
  const cachedTarget = (cpo: PartyRef, emsp: PartyRef): Promise<RoutingTarget> => targets.get({ cpo, emsp });
  router.put(
    '/:cc/:pid/:id/authorize',
    handle(async (req: Request, res: Response) => {
      const path = objectPath(req);
      // The eMSP asks for its own tokens only.
      if (!req.caller.parties.some((p) => p.role === 'EMSP' && !p.suspended && sameParty(p, path))) {
        throw new HubError('FOREIGN_PARTY', { detail: `these credentials do not act as eMSP ${partyKey(path)}` });
      }
      // The shared rate-limit count and the target lookup are independent round trips: run them together.
      // Interface document, Limits: per party, here the eMSP that issued the token (the path's party).
      const decisionPromise = deps.rateLimiter.hit('tokens-authorize', partyKey(path), deps.perMinute);
      decisionPromise.catch(() => undefined);
      const hasBody = req.body !== undefined && !(typeof req.body === 'object' && req.body !== null && Object.keys(req.body as object).length === 0);
      let body: LocationReferences | undefined;
      if (hasBody) {
        body = validateBody(deps.validator, 'ocpi/location_references.json', req.body);
      }
      const emsp = { countryCode: path.countryCode, partyId: path.partyId };
      const targetPromise = targetCpo(deps, req, emsp, body).then(async (cpo) => ({ cpo, target: await cachedTarget(cpo, emsp) }));
      targetPromise.catch(() => undefined);
      const decision = await decisionPromise;
      if (!decision.allowed) {
        throw new HubError('RATE_LIMITED', { detail: `at most ${deps.perMinute} authorizations per minute`, headers: { 'Retry-After': String(decision.retryAfterSeconds) } });
      }
      const { cpo, target } = await targetPromise;
      if (!target.ok) {
        deps.outcomes.inc({ outcome: 'no_receiver' });
        throw new HubError('UNKNOWN_RECEIVER', { detail: target.reason });
      }
      const url = `${target.url.replace(/\/+$/, '')}/${emsp.countryCode}/${emsp.partyId}/${encodeURIComponent(path.id)}/authorize${req.url.includes('?') ? `?${req.url.split('?')[1] ?? ''}` : ''}`;
      const unknown = { allowed: 'UNKNOWN' };
      try {
        const answer = await deps.realtime.call('PUT', url, deps.cipher.open(target.partnerTokenSealed), { requestId: req.ctx.requestId, correlationId: req.ctx.correlationId }, body, {
          'ocpi-from-country-code': emsp.countryCode,
          'ocpi-from-party-id': emsp.partyId,
          'ocpi-to-country-code': cpo.countryCode,
          'ocpi-to-party-id': cpo.partyId,
        });
        // The CPO's AuthorizationInfo, passed on unchanged once its `allowed` is one OCPI knows.
        const data = answer.envelope.data as { allowed?: unknown } | undefined;
        const statusCode = answer.envelope.status_code;
        if (answer.httpStatus >= 200 && answer.httpStatus < 300 && isSuccessCode(statusCode) && typeof data?.allowed === 'string' && ALLOWED.has(data.allowed)) {
          deps.outcomes.inc({ outcome: data.allowed.toLowerCase() });
          send(res, 200, success(data)); // the CPO's answer, unchanged
          return;
        }
        if (typeof statusCode === 'number' && statusCode >= 2000 && statusCode < 4000) {
          // status_codes.asciidoc, 4xxx: the hub forwards the receiving party's error to the client.
          deps.outcomes.inc({ outcome: 'cpo_error' });
          send(res, 200, { status_code: statusCode, status_message: typeof answer.envelope.status_message === 'string' ? answer.envelope.status_message : 'error from the CPO', timestamp: new Date().toISOString(), data: unknown });
          return;
        }
        throw new PartnerCallError('UNEXPECTED_BODY', url, `HTTP ${answer.httpStatus}, status_code ${String(statusCode)}`);
      } catch (e) {
        if (!(e instanceof PartnerCallError)) throw e;
        const kind = e.reason === 'TIMEOUT' ? 'FORWARD_TIMEOUT' : e.reason === 'NETWORK' || e.reason === 'URL_NOT_ALLOWED' ? 'RECEIVER_NOT_CONNECTED' : 'FORWARD_FAILED';
        deps.outcomes.inc({ outcome: kind.toLowerCase() });
        req.ctx.log.warn('token authorization not answered by the CPO: UNKNOWN', { cpo: partyKey(cpo), reason: e.reason, error: e.message });
        throw new HubError(kind, { detail: `${partyKey(cpo)}: ${e.message}`, data: unknown });
      }
    }),
  );
  return refuseOtherMethods(router);
}
