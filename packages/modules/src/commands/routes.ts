import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { commandEventTypes, newEvent, topics } from '@hub/events';
import { HubError, isSuccessCode, partnerHeaders, partyKey, sameParty, success, type PartyRef } from '@hub/ocpi';
import { adapterFor, isNotRepresentable, type VersionAdapter } from '@hub/versions';
import type { VersionEdge } from '../http/version-edge.ts';
import { describeViolations, type SchemaValidator } from '@hub/schemas';
import { PartnerCallError, type CommandStore } from '@hub/core';
import type { ReadModelReads } from '../http/ports.ts';
import { handle, namedSender, send } from '../http/answers.ts';
import type { CommandResponse } from '@hub/schemas/generated/ocpi/command_response';
import type { CommandResult } from '@hub/schemas/generated/ocpi/command_result';
import { asJson, validateBody, type OcpiBodies } from '../http/ocpi-objects.ts';
import { checkResponseUrl } from '../http/response-url.ts';
import { relayedRequestDeps, type RelayedRequestDeps } from '../http/relayed-requests.ts';
import type { ModuleRoutes } from '../http/mounts.ts';

// Commands (interface document, Commands, Command request/response, Errors, Limits; OCPI 2.2.1
// mod_commands.asciidoc). The hub forwards the command to the CPO with response_url rewritten to its
// own callback, answers the eMSP with the CPO's immediate response, and delivers the CPO's result to
// the eMSP's response_url through the dispatcher (or TIMEOUT when none comes).

const SCHEMA = {
  START_SESSION: 'ocpi/start_session.json',
  STOP_SESSION: 'ocpi/stop_session.json',
  RESERVE_NOW: 'ocpi/reserve_now.json',
  CANCEL_RESERVATION: 'ocpi/cancel_reservation.json',
  // mod_commands.asciidoc, UnlockConnector Object: the connector of a location's EVSE.
  UNLOCK_CONNECTOR: 'ocpi/unlock_connector.json',
} as const;

type CommandType = keyof typeof SCHEMA;

/** A command request typed by its command (mod_commands.asciidoc, Object description). */
type CommandRequest = { [C in CommandType]: { readonly command: C; readonly body: OcpiBodies[(typeof SCHEMA)[C]] } }[CommandType];

const isCommandType = (command: string): command is CommandType => Object.hasOwn(SCHEMA, command);

// Each command between the caller's version and the canonical (2.2.1) request, and on to the CPO's
// (docs/reference/version-mapping.md, Commands). CANCEL_RESERVATION exists in 2.2.1 only.
const COMMAND_IN: Record<CommandType, (a: VersionAdapter, body: unknown, emsp: PartyRef) => unknown> = {
  START_SESSION: (a, b, o) => a.startSessionIn(b, o),
  STOP_SESSION: (a, b) => a.stopSessionIn(b),
  RESERVE_NOW: (a, b, o) => a.reserveNowIn(b, o),
  CANCEL_RESERVATION: (_a, b) => b,
  UNLOCK_CONNECTOR: (a, b) => a.unlockConnectorIn(b),
};
const COMMAND_OUT: Record<CommandType, (a: VersionAdapter, body: never) => object> = {
  START_SESSION: (a, b) => a.startSessionOut(b),
  STOP_SESSION: (a, b) => a.stopSessionOut(b),
  RESERVE_NOW: (a, b) => a.reserveNowOut(b),
  CANCEL_RESERVATION: (a, b) => a.cancelReservationOut(b),
  UNLOCK_CONNECTOR: (a, b) => a.unlockConnectorOut(b),
};

/** The request in the caller's version, validated there and translated to the canonical one. */
function validateCommand(validator: SchemaValidator, adapter: VersionAdapter, command: CommandType, body: unknown, emsp: PartyRef): CommandRequest {
  const wire = validateBody(validator, adapter.schemaId(SCHEMA[command].slice('ocpi/'.length, -'.json'.length)) as keyof OcpiBodies, body);
  return { command, body: COMMAND_IN[command](adapter, wire, emsp) } as CommandRequest;
}

/**
 * OCPI 2.1.1 CommandResponse has no timeout (mod_commands.md 4.2): the hub waits this long for a 2.1.1
 * CPO's result before it answers TIMEOUT (plus the grace every CPO gets).
 */
export const TIMEOUT_211_SECONDS = 60;

/** The commands whose CPO is the owner of the location they name (location_id in the body). */
const AT_A_LOCATION = new Set<CommandType>(['START_SESSION', 'RESERVE_NOW', 'UNLOCK_CONNECTOR']);
type AtALocation = Extract<CommandRequest, { command: 'START_SESSION' | 'RESERVE_NOW' | 'UNLOCK_CONNECTOR' }>;
const atALocation = (request: CommandRequest): request is AtALocation => AT_A_LOCATION.has(request.command);

export interface CommandsDeps extends RelayedRequestDeps {
  readonly commands: CommandStore;
  readonly readModels: Pick<ReadModelReads, 'locationOwners' | 'exists'>;
}

function rejected(res: Response, message: string, caller: VersionAdapter, result: 'REJECTED' | 'NOT_SUPPORTED' = 'REJECTED'): void {
  // Interface document, Errors: unknown location or EVSE, no routing, CPO unreachable -> REJECTED.
  send(res, 200, success(caller.commandResponseOut({ result, timeout: 0, message: [{ language: 'en', text: message.slice(0, 512) }] })));
}

async function appendCommandEvent(deps: CommandsDeps, type: string, id: string, data: object, correlationId: string, from: string, to: string): Promise<void> {
  await deps.eventLog.append(topics.commands, [newEvent({ type, source: 'ingress', subject: id, key: id, data, correlationId, from, to })]);
}

// Long because: it declares the module's routes (the eMSP's POST of a command, the CPO's result
// callback) as closures over deps.
export function commandHandlers(deps: CommandsDeps, edge: VersionEdge): Record<string, RequestHandler> {
  const handlers: Record<string, RequestHandler> = {};
  const caller = adapterFor(edge.version);

  // Long because: the five commands share one path through validation, routing, the command record
  // and the forward to the CPO, read top to bottom in the order mod_commands.asciidoc sets.
  handlers['POST commands/{command}'] = handle(async (req: Request, res: Response) => {
    const command = String(req.params['command']);
    if (!isCommandType(command) || !caller.supportsCommand(command)) {
      throw new HubError('INVALID_PARAMETERS', { detail: `unsupported command ${command}; use ${Object.keys(SCHEMA).filter((c) => caller.supportsCommand(c as CommandType)).join(', ')}` });
    }
    const emspParties = req.caller.parties.filter((p) => p.role === 'EMSP' && !p.suspended);
    const sender = namedSender(req);
    const emsp = sender ? emspParties.find((p) => sameParty(p, sender)) : emspParties.length === 1 ? emspParties[0] : undefined;
    if (!emsp) throw new HubError('FOREIGN_PARTY', { detail: 'commands are sent by an eMSP role of these credentials (name it in the OCPI-from headers when there are several)' });
    // Interface document, Limits: per party (each eMSP party of a platform has its own budget).
    const decision = await deps.rateLimiter.hit('commands', partyKey(emsp), deps.perMinute);
    if (!decision.allowed) throw new HubError('RATE_LIMITED', { detail: `at most ${deps.perMinute} commands per minute`, headers: { 'Retry-After': String(decision.retryAfterSeconds) } });
    const request = validateCommand(deps.validator, caller, command, req.body, emsp);
    const body = request.body;

    // response_url: the SSRF rules of every outbound URL (response-url.ts).
    const responseUrl = body.response_url;
    await checkResponseUrl(deps, req.caller.platformId, responseUrl);

    // The CPO: routing headers, else the location, the session or the reservation.
    let cpo: PartyRef | undefined;
    const toCc = typeof req.headers['ocpi-to-country-code'] === 'string' ? req.headers['ocpi-to-country-code'].toUpperCase() : undefined;
    const toPid = typeof req.headers['ocpi-to-party-id'] === 'string' ? req.headers['ocpi-to-party-id'].toUpperCase() : undefined;
    if (toCc && toPid) cpo = { countryCode: toCc, partyId: toPid };
    else if (atALocation(request)) {
      const owners = await deps.readModels.locationOwners(request.body.location_id, emsp);
      if (owners.length > 1) throw new HubError('NOT_ENOUGH_INFORMATION', { detail: 'several CPOs have this location: name one in the OCPI-to headers' });
      cpo = owners[0];
    } else if (request.command === 'STOP_SESSION') cpo = await deps.commands.sessionCpo(emsp, request.body.session_id);
    else cpo = await deps.commands.reservationCpo(emsp, request.body.reservation_id);
    if (!cpo) return rejected(res, command === 'STOP_SESSION' ? 'unknown session' : command === 'CANCEL_RESERVATION' ? 'unknown reservation' : 'unknown location', caller);
    if (atALocation(request) && !(toCc && toPid)) {
      const evseUid = request.body.evse_uid;
      const connectorId = 'connector_id' in request.body ? request.body.connector_id : undefined;
      const known = await deps.readModels.exists('locations', { ...cpo, id: request.body.location_id, ...(evseUid ? { evseUid } : {}), ...(evseUid && connectorId ? { connectorId } : {}) });
      if (!known) return rejected(res, connectorId ? 'unknown connector' : evseUid ? 'unknown EVSE' : 'unknown location', caller);
    }
    const target = await deps.targets.receiverTarget('CPO', 'commands', emsp, cpo);
    if (!target.ok) return rejected(res, target.reason, caller);

    // The CPO's version (docs/reference/version-mapping.md, Commands): 2.1.1 CPOs take no CANCEL_RESERVATION.
    const callee = adapterFor(target.version);
    if (!callee.supportsCommand(command)) return rejected(res, `CPO ${partyKey(cpo)} speaks OCPI ${target.version}, which has no ${command}`, caller, 'NOT_SUPPORTED');
    let outbound: object;
    try {
      outbound = COMMAND_OUT[command](callee, { ...body, response_url: '' } as never);
    } catch (e) {
      if (isNotRepresentable(e)) return rejected(res, e.message, caller);
      throw e;
    }
    const id = randomUUID(); // 122 random bits: the callback's only credential
    const from = partyKey(emsp);
    const to = partyKey(cpo);
    await deps.commands.create({
      id,
      command,
      emsp,
      cpo,
      responseUrl,
      ...(request.command === 'RESERVE_NOW' || request.command === 'CANCEL_RESERVATION' ? { reservationId: request.body.reservation_id } : {}),
      correlationId: req.ctx.correlationId,
    });
    // The CPO posts its result to the hub's callback of its own version.
    const forwarded = { ...outbound, response_url: `${deps.publicBaseUrl}/ocpi/${target.version}/commands/callback/${id}` };
    await appendCommandEvent(deps, commandEventTypes.requested, id, { command, request: { ...body } }, req.ctx.correlationId, from, to);
    let answer: CommandResponse | undefined;
    try {
      const partnerToken = deps.cipher.open(target.partnerTokenSealed);
      const headers = partnerHeaders(target.version, partnerToken, { from: emsp, to: cpo });
      const r = await deps.realtime.call('POST', `${target.url.replace(/\/+$/, '')}/${command}`, partnerToken, { correlationId: req.ctx.correlationId }, forwarded, headers);
      // The CPO's answer as the schema layer normalized it (no null members), as every body the hub
      // passes on, in the CPO's version and then as the canonical CommandResponse.
      const checked = deps.validator.validate(callee.schemaId('command_response'), r.envelope.data);
      if (r.httpStatus >= 200 && r.httpStatus < 300 && isSuccessCode(r.envelope.status_code) && checked.violations.length === 0) answer = callee.commandResponseIn(checked.document, TIMEOUT_211_SECONDS);
    } catch (e) {
      if (!(e instanceof PartnerCallError)) throw e;
      req.ctx.log.warn('command not answered by the CPO: REJECTED', { cpo: to, reason: e.reason, error: e.message });
    }
    const accepted = answer?.result === 'ACCEPTED';
    const timeout = answer?.timeout ?? 0;
    await deps.commands.answered(id, accepted, timeout, deps.graceSeconds);
    await appendCommandEvent(deps, commandEventTypes.cpoResponded, id, { response: answer ?? null }, req.ctx.correlationId, to, from);
    if (!answer) return rejected(res, `CPO ${to} did not answer the command`, caller);
    send(res, 200, success(caller.commandResponseOut(answer))); // the CPO's immediate answer, unchanged but for the version
  });
  return handlers;
}

/** POST /ocpi/2.2.1/commands/callback/{command_id}: no authentication (interface document, Endpoints). */
export function commandCallbackHandlers(deps: Pick<CommandsDeps, 'commands' | 'deliveries' | 'eventLog' | 'validator'>, edge: VersionEdge): Record<string, RequestHandler> {
  const handlers: Record<string, RequestHandler> = {};
  // A 2.1.1 CPO posts a CommandResponse as its result (mod_commands.md 2.1, 2.1.1: no CommandResult).
  const cpo = adapterFor(edge.version);
  const resultSchema = cpo.schemaId(edge.version === '2.1.1' ? 'command_response' : 'command_result');
  handlers['POST commands/callback/{command_id}'] = handle(async (req: Request, res: Response) => {
    const id = String(req.params['command_id']);
    const { document, violations } = deps.validator.validate(resultSchema, req.body);
    // Refused without a trace of whether the id exists: a guessed id learns nothing.
    if (violations.length > 0) throw new HubError('INVALID_PARAMETERS', { detail: describeViolations(violations) });
    const result: CommandResult = cpo.commandResultIn(document);
    const { outcome, command } = await deps.commands.result(id, asJson(result));
    if (outcome === 'unknown' || !command) throw new HubError('NOT_FOUND', { detail: 'no command waits for a result under this id' });
    const from = partyKey(command.cpo);
    const to = partyKey(command.emsp);
    await deps.eventLog.append(topics.commands, [
      newEvent({ type: commandEventTypes.resultReceived, source: 'ingress', subject: id, key: id, data: { result, forwarded: outcome === 'forward' }, correlationId: command.correlationId ?? req.ctx.correlationId, from, to }),
    ]);
    if (outcome === 'forward') {
      await deps.deliveries.enqueue([
        {
          kind: 'command_result',
          emsp: command.emsp,
          cpo: command.cpo,
          objectId: id,
          partition: 0,
          offset: '0',
          payload: asJson(result),
          correlationId: command.correlationId,
          eventTime: new Date().toISOString(),
          targetUrl: command.responseUrl,
        },
      ]);
    }
    // A result after the hub already sent TIMEOUT is recorded, not forwarded.
    send(res, 200, { status_code: 1000, timestamp: new Date().toISOString(), ...(outcome === 'late' ? { status_message: 'recorded; the command had timed out and the eMSP was told so' } : {}) });
  });
  return handlers;
}

// A CPO posts its CommandResult to the callback of its own version: the response_url the commands
// route gives it (mod_commands.asciidoc, CommandResult).
export const commandsRoutes: ModuleRoutes = (deps, _version, edge) => {
  const commandsDeps: CommandsDeps = { ...deps.commands, ...relayedRequestDeps(deps), readModels: deps.objects.readModels };
  return { ...commandHandlers(commandsDeps, edge), ...commandCallbackHandlers(commandsDeps, edge) };
};
