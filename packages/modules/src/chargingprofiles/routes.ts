import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { chargingProfileEventTypes, newEvent, topics } from '@hub/events';
import { acknowledged, HubError, isSuccessCode, partyKey, sameParty, success, type PartyRef } from '@hub/ocpi';
import type { Counter } from '@hub/observability';
import { PartnerCallError, type ChargingProfileOperation, type ChargingProfileStore } from '@hub/core';
import type { ActiveChargingProfile } from '@hub/schemas/generated/ocpi/active_charging_profile';
import type { ChargingProfileResponse } from '@hub/schemas/generated/ocpi/charging_profile_response';
import { handle, namedReceiver, namedSender, send } from '../http/answers.ts';
import { asJson, validateBody } from '../http/ocpi-objects.ts';
import { checkResponseUrl } from '../http/response-url.ts';
import { relayedRequestDeps, type RelayedRequestDeps } from '../http/relayed-requests.ts';
import type { ModuleRoutes } from '../http/mounts.ts';
import { chargingProfileCallbackHandlers } from './callback-routes.ts';

// ChargingProfiles (mod_charging_profiles.asciidoc), relayed like commands (../commands/routes.ts): the
// hub is the Receiver for eMSPs (PUT, GET, DELETE {session_id}), forwards each in real time to the CPO
// of the session with response_url rewritten to its own callback, answers with the CPO's
// ChargingProfileResponse unchanged and delivers the CPO's result to the eMSP's response_url through
// the dispatcher (or its own answer when none comes: docs/decisions/0007). It is the Sender for CPOs:
// an updated ActiveChargingProfile (Sender interface, PUT) goes to the session's eMSP.

export interface ChargingProfilesDeps extends RelayedRequestDeps {
  readonly chargingProfiles: ChargingProfileStore;
  /** Requests by operation and outcome (the CPO's result, or how the hub answered itself). */
  readonly forwarded?: Counter<'operation' | 'outcome'>;
  /** CPO results and ActiveChargingProfile updates by what became of them. */
  readonly results?: Counter<'kind' | 'outcome'>;
}

type Answer = ChargingProfileResponse['result'];

/** The hub's own ChargingProfileResponse, the reason in status_message (the object has no message field). */
function answer(res: Response, result: Answer, message: string): void {
  send(res, 200, success({ result, timeout: 0 }, message.slice(0, 512)));
}

/** The eMSP party of the caller: the one OCPI-from names, else its only eMSP role. */
function callerEmsp(req: Request): PartyRef {
  const emspParties = req.caller.parties.filter((p) => p.role === 'EMSP' && !p.suspended);
  const sender = namedSender(req);
  const emsp = sender ? emspParties.find((p) => sameParty(p, sender)) : emspParties.length === 1 ? emspParties[0] : undefined;
  if (!emsp) throw new HubError('FOREIGN_PARTY', { detail: 'charging profiles are sent by an eMSP role of these credentials (name it in the OCPI-from headers when there are several)' });
  return emsp;
}

/** The caller's CPO party (Sender interface PUT). */
function callerCpo(req: Request): PartyRef {
  const cpoParties = req.caller.parties.filter((p) => p.role === 'CPO' && !p.suspended);
  const sender = namedSender(req);
  const cpo = sender ? cpoParties.find((p) => sameParty(p, sender)) : cpoParties.length === 1 ? cpoParties[0] : undefined;
  if (!cpo) throw new HubError('FOREIGN_PARTY', { detail: 'ActiveChargingProfile updates are sent by a CPO role of these credentials (name it in the OCPI-from headers when there are several)' });
  return cpo;
}

/** session_id: CiString(36) (mod_charging_profiles.asciidoc, Request Parameters). */
function sessionIdOf(req: Request): string {
  const sessionId = String(req.params['session_id']);
  if (sessionId.length === 0 || sessionId.length > 36) throw new HubError('INVALID_PARAMETERS', { detail: 'session_id must be 1 to 36 characters' });
  return sessionId;
}

function queryString(req: Request, name: string): string | undefined {
  const v = req.query[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** response_url of a GET or DELETE: required, a URL (types.asciidoc, URL: string(255)). */
function responseUrlQuery(req: Request): string {
  const responseUrl = queryString(req, 'response_url');
  if (!responseUrl) throw new HubError('INVALID_PARAMETERS', { detail: 'response_url: required query parameter missing' });
  if (responseUrl.length > 255) throw new HubError('INVALID_PARAMETERS', { detail: 'response_url: longer than 255 characters' });
  return responseUrl;
}

/** The versions with the module (2.1.1 has none); 2.3.0's objects are 2.2.1's (ocpi-2.3.0/mod_charging_profiles.asciidoc). */
export type ChargingProfilesVersion = '2.2.1' | '2.3.0';

/** A body valid in its version and in 2.2.1: 2.3.0 members 2.2.1 cannot hold are refused (2001), as at the 2.3.0 edge (ADR 0012). */
function validated<T>(deps: Pick<ChargingProfilesDeps, 'validator'>, version: ChargingProfilesVersion, object: string, body: unknown): T {
  if (version === '2.3.0') validateBody(deps.validator, `ocpi-2.3.0/${object}.json` as never, body);
  return validateBody(deps.validator, `ocpi/${object}.json` as never, body);
}

// Long because: it declares the module's routes (the eMSP's set, get and clear; the CPO's sender and
// callbacks) as closures over deps; the handlers are short and share relay() below.
export function chargingProfileHandlers(deps: ChargingProfilesDeps, version: ChargingProfilesVersion = '2.2.1'): Record<string, RequestHandler> {
  const handlers: Record<string, RequestHandler> = {};

  /** One eMSP request, from the session lookup to the CPO's answer. Long because: it reads in the order it is checked and relayed. */
  async function relay(req: Request, res: Response, operation: ChargingProfileOperation, readRequest: () => { responseUrl: string; body?: Record<string, unknown>; duration?: number }): Promise<void> {
    const emsp = callerEmsp(req);
    const sessionId = sessionIdOf(req);
    // Interface document, Limits: per party, like commands.
    const decision = await deps.rateLimiter.hit('chargingprofiles', partyKey(emsp), deps.perMinute);
    if (!decision.allowed) throw new HubError('RATE_LIMITED', { detail: `at most ${deps.perMinute} charging profile requests per minute`, headers: { 'Retry-After': String(decision.retryAfterSeconds) } });
    const request = readRequest();
    const named = namedReceiver(req);
    // The CPO is the session's: the sessions the hub delivered to this eMSP (a session of another eMSP
    // is unknown to it: mod_charging_profiles.asciidoc, "created by the owner of a Token on Sessions
    // that belong to that token"). OCPI-to, when given, must name that CPO. Looked up while the
    // response_url is checked: both are reads, and the URL is refused first.
    const [, cpos] = await Promise.all([checkResponseUrl(deps, req.caller.platformId, request.responseUrl), deps.chargingProfiles.sessionCpos(emsp, sessionId)]);
    if (cpos.length === 0) throw new HubError('UNKNOWN_SESSION', { detail: `unknown session ${sessionId}: the hub delivered no session of that id to eMSP ${partyKey(emsp)}` });
    if (named && !cpos.some((c) => sameParty(c, named))) {
      throw new HubError('INVALID_PARAMETERS', { detail: `OCPI-to names ${partyKey(named)}, but session ${sessionId} is of CPO ${cpos.map(partyKey).join(', ')}` });
    }
    const cpo = named ?? (cpos.length === 1 ? cpos[0] : undefined);
    if (!cpo) throw new HubError('NOT_ENOUGH_INFORMATION', { detail: `several CPOs have a session ${sessionId}: name one in the OCPI-to headers` });

    const target = await deps.targets.receiverTarget('CPO', 'chargingprofiles', emsp, cpo);
    if (!target.ok) {
      // A CPO without a chargingprofiles receiver does not support the module: the hub says so itself.
      const result: Answer = target.noEndpoint ? 'NOT_SUPPORTED' : 'REJECTED';
      deps.forwarded?.inc({ operation, outcome: result === 'NOT_SUPPORTED' ? 'not_supported_by_hub' : 'rejected_by_hub' });
      return answer(res, result, target.noEndpoint ? `CPO ${partyKey(cpo)} has no chargingprofiles receiver: nothing was forwarded` : target.reason);
    }
    // OCPI 2.1.1 has no Smart Charging module (docs/reference/version-mapping.md): whatever a 2.1.1 CPO
    // registered or an operator set, the hub answers for it.
    if (target.version === '2.1.1') {
      deps.forwarded?.inc({ operation, outcome: 'not_supported_by_hub' });
      return answer(res, 'NOT_SUPPORTED', `CPO ${partyKey(cpo)} speaks OCPI 2.1.1, which has no chargingprofiles module: nothing was forwarded`);
    }

    const id = randomUUID(); // 122 random bits: the callback's only credential
    const from = partyKey(emsp);
    const to = partyKey(cpo);
    // The CPO posts its result to the hub's callback of its own version.
    const callback = `${deps.publicBaseUrl}/ocpi/${target.version === '2.3.0' ? '2.3.0' : '2.2.1'}/chargingprofiles/callback/${id}`;
    const append = (type: string, data: object, source: string, destination: string) =>
      deps.eventLog.append(topics.chargingProfiles, [newEvent({ type, source: 'ingress', subject: id, key: id, data, correlationId: req.ctx.correlationId, from: source, to: destination })]);
    // The row (what the callback finds) and the request's event, both before the CPO is asked, so its
    // result (which may come at once) finds the row and never precedes the request in the log; they do
    // not depend on each other, so they are written together.
    await Promise.all([
      deps.chargingProfiles.create({ id, operation, sessionId, emsp, cpo, responseUrl: request.responseUrl, correlationId: req.ctx.correlationId }),
      append(
        chargingProfileEventTypes.requested,
        { operation, session_id: sessionId, response_url: request.responseUrl, ...(request.body ? { request: request.body } : {}), ...(request.duration !== undefined ? { duration: request.duration } : {}) },
        from,
        to,
      ),
    ]);
    const base = `${target.url.replace(/\/+$/, '')}/${encodeURIComponent(sessionId)}`;
    const headers = { 'ocpi-from-country-code': emsp.countryCode, 'ocpi-from-party-id': emsp.partyId, 'ocpi-to-country-code': cpo.countryCode, 'ocpi-to-party-id': cpo.partyId };
    const ids = { correlationId: req.ctx.correlationId };
    const token = deps.cipher.open(target.partnerTokenSealed);
    let response: ChargingProfileResponse | undefined;
    try {
      const r =
        operation === 'SET'
          ? await deps.realtime.call('PUT', base, token, ids, { ...request.body, response_url: callback }, headers)
          : operation === 'GET'
            ? await deps.realtime.call('GET', `${base}?duration=${String(request.duration)}&response_url=${encodeURIComponent(callback)}`, token, ids, undefined, headers)
            : await deps.realtime.call('DELETE', `${base}?response_url=${encodeURIComponent(callback)}`, token, ids, undefined, headers);
      const checked = deps.validator.validate(target.version === '2.3.0' ? 'ocpi-2.3.0/charging_profile_response.json' : 'ocpi/charging_profile_response.json', r.envelope.data);
      if (r.httpStatus >= 200 && r.httpStatus < 300 && isSuccessCode(r.envelope.status_code) && checked.violations.length === 0) response = checked.document as ChargingProfileResponse;
    } catch (e) {
      if (!(e instanceof PartnerCallError)) throw e;
      req.ctx.log.warn('charging profile request not answered by the CPO: REJECTED', { cpo: to, reason: e.reason, error: e.message });
    }
    // The answer's row update and event are independent: together.
    await Promise.all([
      deps.chargingProfiles.answered(id, response?.result === 'ACCEPTED', response?.timeout ?? 0, deps.graceSeconds),
      append(chargingProfileEventTypes.cpoResponded, { response: response ?? null }, to, from),
    ]);
    deps.forwarded?.inc({ operation, outcome: response ? response.result.toLowerCase() : 'not_answered' });
    if (!response) return answer(res, 'REJECTED', `CPO ${to} did not answer the charging profile request`);
    // The CPO's immediate answer, unchanged; to a caller of another version, result and timeout only.
    send(res, 200, success(target.version === version ? response : { result: response.result, timeout: response.timeout }));
  }

  // mod_charging_profiles.asciidoc, Sender interface, PUT: the CPO's updated ActiveChargingProfile of a
  // session, for the session's eMSP. Its own path (the hub's chargingprofiles SENDER endpoint) keeps it
  // apart from an eMSP's SetChargingProfile PUT.
  handlers['PUT chargingprofiles/sender/{session_id}'] = handle(async (req: Request, res: Response) => {
    const cpo = callerCpo(req);
    const sessionId = sessionIdOf(req);
    const profile = validated<ActiveChargingProfile>(deps, version, 'active_charging_profile', req.body);
    const emsps = await deps.chargingProfiles.sessionEmsps(cpo, sessionId);
    const named = namedReceiver(req);
    if (emsps.length === 0) throw new HubError('UNKNOWN_SESSION', { detail: `unknown session ${sessionId}: CPO ${partyKey(cpo)} pushed no session of that id` });
    const recipients = named ? emsps.filter((e) => sameParty(e, named)) : emsps;
    if (recipients.length === 0) throw new HubError('INVALID_PARAMETERS', { detail: `OCPI-to names ${partyKey(named ?? cpo)}, but session ${sessionId} is of eMSP ${emsps.map(partyKey).join(', ')}` });
    const key = `${cpo.countryCode}/${cpo.partyId}/${sessionId}`.toUpperCase();
    await deps.eventLog.append(
      topics.chargingProfiles,
      recipients.map((emsp) =>
        newEvent({ type: chargingProfileEventTypes.activeProfilePut, source: 'ingress', subject: `${cpo.countryCode}/${cpo.partyId}/${encodeURIComponent(sessionId)}`, key, data: profile, correlationId: req.ctx.correlationId, from: partyKey(cpo), to: partyKey(emsp) }),
      ),
    );
    // One row per session and eMSP holding the newest profile by start_date_time (the module
    // table's 'newest'); the offset orders two pushes of the same start_date_time and tells a
    // delivery in flight from a newer version (postgres-delivery-queue.ts, delivered).
    const offset = nextOffset();
    await deps.deliveries.enqueue(
      recipients.map((emsp) => ({
        kind: 'active_charging_profile' as const,
        emsp,
        cpo,
        objectId: sessionId,
        partition: 0,
        offset,
        payload: asJson(profile),
        correlationId: req.ctx.correlationId,
        eventTime: new Date().toISOString(),
      })),
    );
    deps.results?.inc({ kind: 'active_profile', outcome: 'queued' });
    send(res, 200, acknowledged());
  });

  handlers['PUT chargingprofiles/{session_id}'] = handle((req, res) =>
    relay(req, res, 'SET', () => {
      const body = validated<{ response_url: string }>(deps, version, 'set_charging_profile', req.body);
      return { responseUrl: body.response_url, body: { ...body } };
    }),
  );
  handlers['GET chargingprofiles/{session_id}'] = handle((req, res) =>
    relay(req, res, 'GET', () => {
      const responseUrl = responseUrlQuery(req);
      const raw = queryString(req, 'duration');
      if (raw === undefined || !/^\d{1,9}$/.test(raw)) throw new HubError('INVALID_PARAMETERS', { detail: 'duration: required query parameter, a whole number of seconds' });
      return { responseUrl, duration: Number(raw) };
    }),
  );
  handlers['DELETE chargingprofiles/{session_id}'] = handle((req, res) =>
    relay(req, res, 'CLEAR', () => {
      return { responseUrl: responseUrlQuery(req) };
    }),
  );
  return handlers;
}

let lastOffset = 0n;
/** Increasing per process (microseconds since the epoch, bumped past the last one). */
function nextOffset(): string {
  const now = BigInt(Date.now()) * 1000n;
  lastOffset = now > lastOffset ? now : lastOffset + 1n;
  return lastOffset.toString();
}

export const chargingProfilesRoutes: ModuleRoutes = (deps, version) => {
  const profilesDeps: ChargingProfilesDeps = {
    ...deps.chargingProfiles,
    ...relayedRequestDeps(deps),
    // The response_url rules and the CPO's grace are the commands' (mod_charging_profiles.asciidoc,
    // Flow: "similar to the Commands module").
    checkOutboundUrl: deps.commands.checkOutboundUrl,
    graceSeconds: deps.commands.graceSeconds,
    responseUrlHosts: deps.commands.responseUrlHosts,
  };
  // Charging profiles exist in 2.2.1 and 2.3.0 only (the module declares no 2.1.1 endpoint).
  const profilesVersion: ChargingProfilesVersion = version === '2.3.0' ? '2.3.0' : '2.2.1';
  return { ...chargingProfileHandlers(profilesDeps, profilesVersion), ...chargingProfileCallbackHandlers(profilesDeps, profilesVersion) };
};
