import type { Request, RequestHandler, Response } from 'express';
import { HubError, isSuccessCode, partnerHeaders, partyKey, sameParty, statusCodeIn, success, type OcpiVersion, type PartyRef } from '@hub/ocpi';
import { tokenObjectId } from '../index.ts';
import { cachedLookup, PartnerCallError, type OcpiPartnerClient, type RateLimiter, type RoutingDirectory, type RoutingTarget, type TokenCipher } from '@hub/core';
import type { SchemaValidator } from '@hub/schemas';
import type { Counter } from '@hub/observability';
import { handle, namedSender, send } from '../http/answers.ts';
import { objectPath, validateBody, type OcpiBodies } from '../http/ocpi-objects.ts';
import type { VersionEdge } from '../http/version-edge.ts';
import type { Token } from '@hub/schemas/generated/ocpi/token';
import { adapterFor, parseEmaId } from '@hub/versions';
import type { LocationReferences } from '@hub/schemas/generated/ocpi/location_references';
import type { ReadModelReads } from '../http/ports.ts';

// Real-time token authorization, both ways, forwarded at once and answered with the other side's
// answer unchanged. A side that cannot be reached, times out or answers garbage yields UNKNOWN.
// - eMSP -> CPO (interface document, Token authorization, Errors, Limits): PUT {cc}/{pid}/{uid}/authorize
//   to the CPO that owns the location.
// - CPO -> eMSP (mod_tokens.asciidoc, Sender interface, Real-time authorization): POST {uid}/authorize
//   [?type=] to the eMSP that issued the token, at its tokens SENDER endpoint.

export interface TokensDeps {
  readonly realtime: OcpiPartnerClient;
  readonly cipher: TokenCipher;
  readonly targets: RoutingDirectory;
  readonly readModels: Pick<ReadModelReads, 'locationOwners' | 'tokenOwners' | 'findVisible'>;
  readonly rateLimiter: RateLimiter;
  readonly validator: SchemaValidator;
  /** Per party and minute, for either direction (each has its own bucket). */
  readonly perMinute: number;
  /** hub_authorizations_total: eMSP-initiated series carry no direction (their names predate it). */
  readonly outcomes: Counter<'outcome' | 'direction'>;
}

const ALLOWED = new Set(['ALLOWED', 'BLOCKED', 'EXPIRED', 'NO_CREDIT', 'NOT_ALLOWED', 'UNKNOWN']);
/** mod_tokens.asciidoc, TokenType enum. */
const TOKEN_TYPES = new Set(['AD_HOC_USER', 'APP_USER', 'OTHER', 'RFID']);
const PRINTABLE_UID = /^[\x21-\x7e]{1,36}$/;

function header(req: Request, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' && v.trim() ? v.trim().toUpperCase() : undefined;
}

/** The party named by the OCPI-to headers (transport_and_format.asciidoc, routing headers), if any. */
function namedReceiver(req: Request): PartyRef | undefined {
  const toCc = header(req, 'ocpi-to-country-code');
  const toPid = header(req, 'ocpi-to-party-id');
  return toCc && toPid ? { countryCode: toCc, partyId: toPid } : undefined;
}

/** The optional LocationReferences body (mod_tokens.asciidoc, Request Body) in the caller's version, as the canonical one; an empty body is none. */
function locationReferences(deps: TokensDeps, req: Request, edge: VersionEdge): LocationReferences | undefined {
  const hasBody = req.body !== undefined && !(typeof req.body === 'object' && req.body !== null && Object.keys(req.body as object).length === 0);
  if (!hasBody) return undefined;
  const adapter = adapterFor(edge.version);
  return adapter.locationReferencesIn(validateBody(deps.validator, adapter.schemaId('location_references') as keyof OcpiBodies, req.body));
}

/** The CPO: OCPI-to headers when present, else the location's owner. */
async function targetCpo(deps: TokensDeps, req: Request, emsp: PartyRef, body: LocationReferences | undefined): Promise<PartyRef> {
  const named = namedReceiver(req);
  if (named) return named;
  const locationId = body?.location_id;
  if (!locationId) throw new HubError('NOT_ENOUGH_INFORMATION', { detail: 'name the CPO in the OCPI-to-country-code/OCPI-to-party-id headers or give a location_id' });
  const owners = await deps.readModels.locationOwners(locationId, emsp);
  if (owners.length === 0) throw new HubError('UNKNOWN_LOCATION_PUSH', { detail: `no routed CPO has location ${locationId}` });
  if (owners.length > 1) throw new HubError('NOT_ENOUGH_INFORMATION', { detail: `several CPOs have location ${locationId}: name one in the OCPI-to headers` });
  return owners[0] as PartyRef;
}

/**
 * The eMSP: OCPI-to headers when present (an eMSP that does not push its tokens is reached so), else
 * the routed eMSP whose pushed token this is (tokens read model). A 2.1.1 CPO sends no OCPI-to headers
 * (2.1.1 has none): for it, as for the auth_id of its sessions and CDRs, a token no eMSP pushed goes
 * to the eMSP its eMA-ID names (docs/reference/version-mapping.md, Routing without cdr_token).
 */
async function targetEmsp(deps: TokensDeps, req: Request, cpo: PartyRef, uid: string, type: string | undefined, version: OcpiVersion): Promise<PartyRef> {
  const named = namedReceiver(req);
  if (named) return named;
  const owners = await deps.readModels.tokenOwners(tokenObjectId(uid, type), cpo);
  const ema = owners.length === 0 && version === '2.1.1' ? parseEmaId(uid) : undefined;
  if (ema) return { countryCode: ema.countryCode, partyId: ema.providerId };
  // mod_tokens.asciidoc, POST Response Data: an unknown token is 2004 without data.
  if (owners.length === 0) throw new HubError('UNKNOWN_TOKEN_AUTHORIZE', { detail: `no eMSP routed to ${partyKey(cpo)} has pushed token ${uid} (${type ?? 'RFID'}); name the eMSP in the OCPI-to headers` });
  if (owners.length > 1) throw new HubError('NOT_ENOUGH_INFORMATION', { detail: `several eMSPs have token ${uid}: name one in the OCPI-to headers` });
  return owners[0] as PartyRef;
}

/**
 * 2.1.1 has token types RFID and OTHER only (mod_tokens.md 4.3): a 2.2.1 or 2.3.0 eMSP's APP_USER or
 * AD_HOC_USER token reaches a 2.1.1 CPO as OTHER (docs/reference/version-mapping.md, Token), so the
 * CPO's authorization of type OTHER is for the token pushed under any of the three. The type the
 * pushed token has, for the lookup, the forward and the answer's Token; as asked when none is found.
 */
async function typeOf211Token(deps: TokensDeps, req: Request, cpo: PartyRef, uid: string, type: string | undefined): Promise<string | undefined> {
  if (type !== 'OTHER' || namedReceiver(req)) return type;
  for (const pushed of ['OTHER', 'APP_USER', 'AD_HOC_USER']) if ((await deps.readModels.tokenOwners(tokenObjectId(uid, pushed), cpo)).length > 0) return pushed;
  return type;
}

/** The calling CPO: a non-suspended CPO party of the credentials, chosen by OCPI-from when there are several. */
function actingCpo(req: Request): PartyRef {
  const cpos = req.caller.parties.filter((p) => p.role === 'CPO' && !p.suspended);
  const sender = namedSender(req);
  const cpo = sender ? cpos.find((p) => sameParty(p, sender)) : cpos.length === 1 ? cpos[0] : undefined;
  if (!cpo) throw new HubError('FOREIGN_PARTY', { detail: 'real-time authorizations are asked by a CPO role of these credentials (name it in the OCPI-from headers when there are several)' });
  return { countryCode: cpo.countryCode, partyId: cpo.partyId };
}

interface Forward {
  readonly method: 'PUT' | 'POST';
  readonly url: string;
  readonly target: Extract<RoutingTarget, { ok: true }>;
  readonly body: LocationReferences | undefined;
  readonly from: PartyRef;
  readonly to: PartyRef;
  /** Who answers: named in logs and in the outcome of its OCPI errors (cpo_error, emsp_error). */
  readonly called: 'CPO' | 'eMSP';
  readonly labels: { direction?: string };
  /** The caller's version (its answer is written in it) and the Token asked about, for a callee of a version whose answer names none. */
  readonly callerVersion: OcpiVersion;
  readonly token: () => Promise<Token>;
}

/** The forward and its answer, the same rules both ways (interface document, Errors). */
async function forwardAuthorization(deps: TokensDeps, req: Request, res: Response, f: Forward): Promise<void> {
  const unknown = { allowed: 'UNKNOWN' };
  const count = (outcome: string) => deps.outcomes.inc({ outcome, ...f.labels });
  // Each side in its own version (docs/reference/version-mapping.md): the request translated to the
  // callee's, its answer through the canonical AuthorizationInfo to the caller's.
  const callee = adapterFor(f.target.version);
  const caller = adapterFor(f.callerVersion);
  const partnerToken = deps.cipher.open(f.target.partnerTokenSealed);
  const headers = partnerHeaders(f.target.version, partnerToken, { from: f.from, to: f.to });
  try {
    const body = f.body && callee.locationReferencesOut(f.body);
    const answer = await deps.realtime.call(f.method, f.url, partnerToken, { requestId: req.ctx.requestId, correlationId: req.ctx.correlationId }, body, headers);
    // The AuthorizationInfo, passed on unchanged (but for the version) once its `allowed` is one OCPI knows.
    const data = answer.envelope.data as { allowed?: unknown } | undefined;
    const statusCode = answer.envelope.status_code;
    if (answer.httpStatus >= 200 && answer.httpStatus < 300 && isSuccessCode(statusCode) && typeof data?.allowed === 'string' && ALLOWED.has(data.allowed)) {
      // A 2.2.1 or 2.3.0 AuthorizationInfo requires its Token (mod_tokens.asciidoc, AuthorizationInfo
      // object); a 2.1.1 one has none (mod_tokens.md 3.2.1), and a sloppy partner may leave it out. A
      // caller of 2.2.1 or 2.3.0 gets the Token asked about then (f.token: the hub's read model, else
      // 2004); a 2.1.1 caller needs none (docs/reference/version-mapping.md, AuthorizationInfo).
      const carried = (data as { token?: unknown }).token;
      const carries = f.target.version !== '2.1.1' && carried !== null && typeof carried === 'object';
      const wantsToken = f.callerVersion !== '2.1.1';
      if (f.target.version === f.callerVersion && (carries || !wantsToken)) {
        count(data.allowed.toLowerCase());
        send(res, 200, success(data));
        return;
      }
      const token = carries ? (carried as Token) : wantsToken ? await f.token().catch((e: unknown) => { count('token_not_known'); throw e; }) : undefined;
      count(data.allowed.toLowerCase());
      send(res, 200, success(caller.authorizationInfoOut(callee.authorizationInfoIn(data, token))));
      return;
    }
    // mod_tokens.asciidoc, POST Method: an eMSP that does not know the token answers HTTP 404 with 2004;
    // the CPO gets 2004 without data, as the eMSP said. A bare 404 (no OCPI answer: a wrong URL) is
    // not that, and falls through to FORWARD_FAILED.
    if (f.called === 'eMSP' && statusCode === 2004) {
      count('unknown_token');
      throw new HubError('UNKNOWN_TOKEN_AUTHORIZE', { detail: `${partyKey(f.to)} does not know the token` });
    }
    if (typeof statusCode === 'number' && statusCode >= 2000 && statusCode < 4000) {
      // status_codes.asciidoc, 4xxx: the hub forwards the receiving party's error to the client.
      count(`${f.called.toLowerCase()}_error`);
      const message = typeof answer.envelope.status_message === 'string' ? answer.envelope.status_message : `error from the ${f.called}`;
      const code = statusCodeIn(f.callerVersion, statusCode);
      // 2.1.1 has no UNKNOWN in its Allowed enum (mod_tokens.md 4.1): its callers get the code alone.
      send(res, 200, { status_code: code, status_message: message, timestamp: new Date().toISOString(), ...(f.callerVersion === '2.1.1' ? {} : { data: unknown }) });
      return;
    }
    throw new PartnerCallError('UNEXPECTED_BODY', f.url, `HTTP ${answer.httpStatus}, status_code ${String(statusCode)}`);
  } catch (e) {
    if (!(e instanceof PartnerCallError)) throw e;
    const kind = e.reason === 'TIMEOUT' ? 'FORWARD_TIMEOUT' : e.reason === 'NETWORK' || e.reason === 'URL_NOT_ALLOWED' ? 'RECEIVER_NOT_CONNECTED' : 'FORWARD_FAILED';
    count(kind.toLowerCase());
    req.ctx.log.warn(`token authorization not answered by the ${f.called}: UNKNOWN`, { [f.called.toLowerCase()]: partyKey(f.to), reason: e.reason, error: e.message });
    throw new HubError(kind, { detail: `${partyKey(f.to)}: ${e.message}`, data: unknown });
  }
}

/**
 * The Token asked about, as the hub's read model has it, for an answer that does not carry it. When the
 * hub has none, it cannot give the caller the AuthorizationInfo its version requires, nor make a Token
 * up (contract_id, issuer, whitelist are the eMSP's). Nor is the token unknown (2004): the eMSP answered
 * for it. The answer is unusable to the caller, as any other (interface document, Errors): 4000 with
 * allowed UNKNOWN, so the CPO falls back on its own rules for an unreachable eMSP.
 */
async function knownToken(deps: TokensDeps, req: Request, owner: PartyRef, uid: string, type: string | undefined, answered: PartyRef): Promise<Token> {
  const stored = await deps.readModels.findVisible('tokens', req.caller.platformId, { ...owner, id: tokenObjectId(uid, type) });
  if (stored) return stored as unknown as Token;
  throw new HubError('FORWARD_FAILED', {
    detail: `${partyKey(answered)} answered without the Token (its version has none, or it left it out), and the hub has no token ${uid} of ${partyKey(owner)}`,
    data: { allowed: 'UNKNOWN' },
  });
}

/** Answers 429 once the party spent its minute (interface document, Limits: per party). */
function requireBudget(deps: TokensDeps, decision: { allowed: boolean; retryAfterSeconds: number }): void {
  if (!decision.allowed) {
    throw new HubError('RATE_LIMITED', { detail: `at most ${deps.perMinute} authorizations per minute`, headers: { 'Retry-After': String(decision.retryAfterSeconds) } });
  }
}

function refuseUnusable(deps: TokensDeps, target: RoutingTarget, labels: { direction?: string }): asserts target is Extract<RoutingTarget, { ok: true }> {
  if (target.ok) return;
  deps.outcomes.inc({ outcome: 'no_receiver', ...labels });
  throw new HubError('UNKNOWN_RECEIVER', { detail: target.reason });
}

// Long because: it declares the tokens routes of both interfaces (pulls, pushes, real-time authorization
// both ways) as closures over deps; the shared forward is forwardAuthorization above.
export function authorizeHandlers(deps: TokensDeps, edge: VersionEdge): Record<string, RequestHandler> {
  const handlers: Record<string, RequestHandler> = {};
  // A usable endpoint is kept for 2 s (a driver is waiting; the same pairs repeat). A failed lookup is
  // never kept, so a fixed routing rule or URL applies at once; a disabled one within 2 s.
  type Pair = { cpo: PartyRef; emsp: PartyRef; called: 'CPO' | 'EMSP' };
  const targets = cachedLookup(
    2_000,
    // The CPO's tokens RECEIVER (PUT authorize); the eMSP's tokens SENDER (POST authorize).
    ({ cpo, emsp, called }: Pair) => deps.targets.receiverTarget(called, 'tokens', emsp, cpo, undefined, called === 'CPO' ? 'RECEIVER' : 'SENDER'),
    ({ cpo, emsp, called }) => `${called}|${partyKey(emsp)}|${partyKey(cpo)}`,
    (t) => t.ok,
  );
  const query = (req: Request) => (req.url.includes('?') ? `?${req.url.split('?')[1] ?? ''}` : '');

  // mod_tokens.md (2.1.1): the CPO interface has no real-time authorization; an eMSP asks only in 2.2.1,
  // so 2.1.1 has no such URL (module.ts: notIn 2.1.1, so it is not mounted there).
  handlers['PUT tokens/{country_code}/{party_id}/{token_uid}/authorize'] = handle(async (req: Request, res: Response) => {
    const path = objectPath(req, 'token_uid');
    // The eMSP asks for its own tokens only.
    if (!req.caller.parties.some((p) => p.role === 'EMSP' && !p.suspended && sameParty(p, path))) {
      throw new HubError('FOREIGN_PARTY', { detail: `these credentials do not act as eMSP ${partyKey(path)}` });
    }
    // The shared rate-limit count and the target lookup are independent round trips: run them together.
    // Interface document, Limits: per party, here the eMSP that issued the token (the path's party).
    const decisionPromise = deps.rateLimiter.hit('tokens-authorize', partyKey(path), deps.perMinute);
    decisionPromise.catch(() => undefined);
    const body = locationReferences(deps, req, edge);
    const emsp = { countryCode: path.countryCode, partyId: path.partyId };
    const targetPromise = targetCpo(deps, req, emsp, body).then(async (cpo) => ({ cpo, target: await targets.get({ cpo, emsp, called: 'CPO' }) }));
    targetPromise.catch(() => undefined);
    requireBudget(deps, await decisionPromise);
    const { cpo, target } = await targetPromise;
    refuseUnusable(deps, target, {});
    if (target.version === '2.1.1') {
      deps.outcomes.inc({ outcome: 'no_receiver' });
      throw new HubError('UNKNOWN_RECEIVER', { detail: `CPO ${partyKey(cpo)} speaks OCPI 2.1.1, whose CPOs take no real-time authorization (mod_tokens.md, 2.1.1)` });
    }
    const url = `${target.url.replace(/\/+$/, '')}/${emsp.countryCode}/${emsp.partyId}/${encodeURIComponent(path.id)}/authorize${query(req)}`;
    // Only 2.2.1 and 2.3.0 CPOs are asked (above), whose answer carries the Token; one that leaves it
    // out gets the eMSP's own, as the hub has it.
    const token = () => knownToken(deps, req, emsp, path.id, typeof req.query['type'] === 'string' ? req.query['type'].toUpperCase() : undefined, cpo);
    await forwardAuthorization(deps, req, res, { method: 'PUT', url, target, body, from: emsp, to: cpo, called: 'CPO', labels: {}, callerVersion: edge.version, token });
  });

  handlers['POST tokens/{token_uid}/authorize'] = handle(async (req: Request, res: Response) => {
    const uid = String(req.params['token_uid']);
    if (!PRINTABLE_UID.test(uid)) throw new HubError('INVALID_PARAMETERS', { detail: 'token_uid must be 1 to 36 printable characters' });
    const rawType = req.query['type'];
    if (rawType !== undefined && (typeof rawType !== 'string' || !TOKEN_TYPES.has(rawType.toUpperCase()))) {
      throw new HubError('INVALID_PARAMETERS', { detail: `type must be one of ${[...TOKEN_TYPES].join(', ')}` });
    }
    const cpo = actingCpo(req);
    // Limits as for the eMSP's direction, per calling CPO party, in a bucket of its own (a party id
    // may be both a CPO and an eMSP).
    const decisionPromise = deps.rateLimiter.hit('tokens-authorize-cpo', partyKey(cpo), deps.perMinute);
    decisionPromise.catch(() => undefined);
    // A 2.1.1 CPO's OTHER is looked up once the budget allows it (typeOf211Token reads the read model).
    if (edge.version === '2.1.1' && rawType?.toUpperCase() === 'OTHER') requireBudget(deps, await decisionPromise);
    const type = edge.version === '2.1.1' ? await typeOf211Token(deps, req, cpo, uid, rawType?.toUpperCase()) : rawType?.toUpperCase();
    const body = locationReferences(deps, req, edge);
    const targetPromise = targetEmsp(deps, req, cpo, uid, type, edge.version).then(async (emsp) => ({ emsp, target: await targets.get({ cpo, emsp, called: 'EMSP' }) }));
    targetPromise.catch(() => undefined);
    requireBudget(deps, await decisionPromise);
    const { emsp, target } = await targetPromise;
    const labels = { direction: 'cpo_to_emsp' };
    refuseUnusable(deps, target, labels);
    // mod_tokens.asciidoc, POST Method: {tokens_endpoint_url}{token_uid}/authorize[?type={type}]; a 2.1.1
    // eMSP knows RFID and OTHER only (mod_tokens.md 4.3), as which it got APP_USER and AD_HOC_USER tokens.
    const asked = target.version === '2.1.1' && (type === 'APP_USER' || type === 'AD_HOC_USER') ? 'OTHER' : type;
    const url = `${target.url.replace(/\/+$/, '')}/${encodeURIComponent(uid)}/authorize${asked ? `?type=${asked}` : ''}`;
    // The Token a 2.1.1 eMSP's answer does not carry (mod_tokens.md 3.2.1), nor a sloppy one's: the one it pushed.
    const token = () => knownToken(deps, req, emsp, uid, type, emsp);
    await forwardAuthorization(deps, req, res, { method: 'POST', url, target, body, from: cpo, to: emsp, called: 'eMSP', labels, callerVersion: edge.version, token });
  });
  return handlers;
}
