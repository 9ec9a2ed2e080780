import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { topics } from '@hub/events';
import { HubError } from '@hub/ocpi';
import type { Counter } from '@hub/observability';
import type { Cdr } from '@hub/schemas/generated/ocpi/cdr';
import { appendCdrEventsOnce, cdrPostedEvent, type CdrEventLog } from './cdr-event.ts';
import { handle, ok, okEmpty } from '../http/answers.ts';
import { asJson, objectPath, requireOwnCpo } from '../http/ocpi-objects.ts';
import { requireEmspToken, sessionCdrDeps, type SessionCdrDeps } from '../http/charging-objects.ts';
import type { ModuleRoutes } from '../http/mounts.ts';

// CDRs (interface document, CDRs; OCPI 2.2.1 mod_cdrs.asciidoc): the CPO posts, the hub appends each
// CDR once and the dispatcher delivers it.

/** How CDR events are appended once each (docs/decisions/0003-each-cdr-once.md). */
export interface CdrAppendDeps {
  /** The event log, searched before a CDR whose append may have landed is appended again. */
  readonly eventLog: CdrEventLog;
  /** Seconds after an append of a CDR began that it is taken as settled (CDR_RELAY_AFTER_SECONDS). */
  readonly settleSeconds: number;
  /** ce_source of the CDR events: the hub's URI (README, The CDR topic). */
  readonly source: string;
  /** hub_cdr_reappends_total by outcome (appended, already_present). */
  readonly reappends?: Counter<'outcome'>;
}

/** Canonical JSON (sorted keys): an identical CDR re-POSTed with its fields in another order is the same CDR. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    // Keys in UTF-16 code unit order, as Array.prototype.sort orders strings.
    return `{${Object.entries(value)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The caller's CPO party: the owner of what a 2.1.1 CPO pushes (its objects carry none; credentials.md 2.1, 2.1.1). */
function ownCpo(req: Request): { countryCode: string; partyId: string } {
  const cpo = req.caller.parties.find((p) => p.role === 'CPO' && !p.suspended);
  if (!cpo) throw new HubError('FOREIGN_PARTY', { detail: 'these credentials act as no CPO' });
  return cpo;
}

// Long because: the CDR POST, which appends each CDR once (decision 0003), and the owner's GET, as
// closures over deps and the edge.
export const cdrsRoutes: ModuleRoutes = (moduleDeps, _version, edge) => {
  const deps: SessionCdrDeps & { cdrs: CdrAppendDeps } = { ...sessionCdrDeps(moduleDeps), cdrs: moduleDeps.cdrs };
  return {
    'POST cdrs': handle(async (req: Request, res: Response) => {
      // A 2.2.1 CDR names its owner; a 2.1.1 one is the caller's (mod_cdrs.md 2.2.2, 2.1.1).
      const owner = edge.version === '2.2.1' ? { countryCode: '', partyId: '' } : ownCpo(req);
      const body = (await edge.chargingIn('cdr', req.body, false, owner, (contractId) => deps.readModels.tokensByContractId(contractId, owner))) as unknown as Cdr;
      // For CDRs the owner is in the body (mod_cdrs.asciidoc, POST: the endpoint has no path ids).
      const path = { countryCode: body.country_code.toUpperCase(), partyId: body.party_id.toUpperCase(), id: body.id };
      requireOwnCpo(req, path);
      requireEmspToken(body.cdr_token);
      const contentHash = createHash('sha256').update(canonical(body)).digest('hex');
      const receipt = await deps.deliveries.receiveCdr({ ...path, contentHash, document: asJson(body) });
      // Interface document, What the service does 6: CDRs are immutable; corrections need a new CDR.
      if (receipt === 'conflict') {
        throw new HubError('INVALID_PARAMETERS', { detail: `a different CDR with id ${path.id} was already received; CDRs are immutable, send a corrected CDR under a new id` });
      }
      const event = cdrPostedEvent(path, asJson(body), contentHash, { source: deps.cdrs.source, correlationId: req.ctx.correlationId, requestId: req.ctx.requestId });
      if (receipt === 'new') {
        await deps.eventLog.append(topics.cdrs, [event]);
        await deps.deliveries.markCdrAppended(path);
      } else if (receipt === 'retry-append') {
        // A retry of an append that failed or timed out: it may have landed, or still land while it is
        // in flight. Taken only once the earlier append has settled, then appended only if its
        // partition does not hold it, so each CDR is in ocpi.cdrs.v1 once (docs/decisions/0003-each-cdr-once.md).
        const claim = await deps.deliveries.claimCdrAppend(path, deps.cdrs.settleSeconds);
        if (!claim) {
          throw new HubError('UNAVAILABLE', {
            detail: `an earlier append of CDR ${path.id} has not settled yet; retry later`,
            headers: { 'Retry-After': String(deps.cdrs.settleSeconds) },
          });
        }
        const { appended, present } = await appendCdrEventsOnce(deps.cdrs.eventLog, [{ event, receivedAt: claim.receivedAt }]);
        deps.cdrs.reappends?.inc({ outcome: 'appended' }, appended.length);
        deps.cdrs.reappends?.inc({ outcome: 'already_present' }, present.length);
        await deps.deliveries.markCdrAppended(path);
      }
      // mod_cdrs.asciidoc, POST response headers: Location of the CDR, where its owner can GET it.
      res.setHeader('Location', `${deps.publicBaseUrl}/ocpi/${edge.version}/cdrs/${path.countryCode}/${path.partyId}/${encodeURIComponent(path.id)}`);
      okEmpty(res);
    }),
    'GET cdrs/{country_code}/{party_id}/{cdr_id}': handle(async (req: Request, res: Response) => {
      const path = objectPath(req, 'cdr_id', 39);
      // Interface document: no GET of CDRs for eMSPs; the owning CPO may verify what the hub holds.
      requireOwnCpo(req, path);
      const cdr = await deps.deliveries.findCdr(path);
      const shown = cdr && edge.cdrOut(cdr);
      if (!shown) throw new HubError('NOT_FOUND', { detail: `no CDR ${path.id}` });
      ok(res, shown);
    }),
  };
};
