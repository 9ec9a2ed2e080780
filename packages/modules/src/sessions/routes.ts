import type { Request, Response } from 'express';
import { sessionEventTypes, topics } from '@hub/events';
import { HubError } from '@hub/ocpi';
import { handle, okEmpty } from '../http/answers.ts';
import { KnownSessions, requireKnownSession } from '../http/known-sessions.ts';
import type { Session } from '@hub/schemas/generated/ocpi/session';
import { appendObjectEvent, objectPath, requireOwnCpo, requireSameIds, type OcpiPatch } from '../http/ocpi-objects.ts';
import { eMspOf, requireEmspToken, sessionCdrDeps, type SessionCdrDeps } from '../http/charging-objects.ts';
import type { ModuleRoutes } from '../http/mounts.ts';

// Sessions (interface document, Sessions; OCPI 2.2.1 mod_sessions.asciidoc): the CPO pushes, the hub
// appends an event and the dispatcher delivers it.

const SESSION = 'sessions/{country_code}/{party_id}/{session_id}';
const sessionPath = (req: Request) => objectPath(req, 'session_id');

// Long because: one handler per declared route (module.ts), each a closure over deps and the edge.
export const sessionsRoutes: ModuleRoutes = (moduleDeps, _version, edge) => {
  const deps: SessionCdrDeps = sessionCdrDeps(moduleDeps);
  const tokensOf = (path: { countryCode: string; partyId: string }) => (contractId: string) => deps.readModels.tokensByContractId(contractId, path);
  // mod_sessions.asciidoc, Receiver interface, PATCH: an update of a session the hub holds. The
  // dispatcher merges it into the full session and delivers that (the eMSP always gets full states).
  const known = new KnownSessions();
  return {
    [`PUT ${SESSION}`]: handle(async (req: Request, res: Response) => {
      const path = sessionPath(req);
      requireOwnCpo(req, path);
      const body = (await edge.chargingIn('session', req.body, false, path, tokensOf(path))) as unknown as Session;
      requireSameIds(body, { country_code: path.countryCode, party_id: path.partyId, id: path.id });
      requireEmspToken(body.cdr_token);
      await appendObjectEvent(deps.eventLog, req, topics.sessions, sessionEventTypes.sessionPut, path, body, eMspOf(body.cdr_token));
      okEmpty(res);
    }),
    [`PATCH ${SESSION}`]: handle(async (req: Request, res: Response) => {
      const path = sessionPath(req);
      requireOwnCpo(req, path);
      // Partial Session; last_updated required (mod_sessions.asciidoc, PATCH Method).
      const body = (await edge.chargingIn('session', req.body, true, path, tokensOf(path))) as unknown as OcpiPatch<Session>;
      requireSameIds(body, { country_code: path.countryCode, party_id: path.partyId, id: path.id });
      if (body.cdr_token !== undefined) requireEmspToken(body.cdr_token);
      // "If existing ChargingPeriod objects ... need to be replaced or removed, the Sender SHALL use the
      // PUT method" (mod_sessions.asciidoc, PATCH Method): a PATCH only adds periods.
      if (body.charging_periods === null) throw new HubError('INVALID_PARAMETERS', { detail: 'charging_periods cannot be removed by PATCH: PUT the whole session' });
      await requireKnownSession(deps.deliveries, deps.dispatcherWait, known, path);
      await appendObjectEvent(deps.eventLog, req, topics.sessions, sessionEventTypes.sessionPatched, path, body, body.cdr_token ? eMspOf(body.cdr_token) : undefined);
      okEmpty(res);
    }),
  };
};
