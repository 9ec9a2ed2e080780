// Commands between OCPI 2.1.1 (mod_commands.md) and 2.2.1 (mod_commands.asciidoc). 2.1.1 has no
// CommandResult: the CPO POSTs a CommandResponse to the response_url (mod_commands.md 3.2-3.5), and
// no CANCEL_RESERVATION (mod_commands.md 4.2).
import type { CommandResponse, CommandResult, CommandType, Owner, ReserveNow, StartSession, StopSession, UnlockConnector } from '../canonical.ts';
import { NotRepresentableError } from '../errors.ts';
import { compact } from '../version-fields.ts';
import { tokenIn, tokenOut } from './tokens.ts';
import type * as W from './types.ts';

type Result211 = W.CommandResponse['result'];

/** mod_commands.md 4.2 CommandType. */
export function supportsCommand(type: CommandType): boolean {
  return type !== 'CANCEL_RESERVATION';
}

/** A 2.1.1 eMSP's StartSession: its Token is the eMSP's (owner). */
export function startSessionIn(command: W.StartSession, owner: Owner): StartSession {
  return { ...command, token: tokenIn(command.token, owner) };
}

/** connector_id and authorization_reference (2.2.1 only) are dropped: a 2.1.1 CPO starts on the EVSE. */
export function startSessionOut(command: StartSession): W.StartSession {
  const { connector_id: _c, authorization_reference: _a, token, ...same } = command;
  return { ...same, token: tokenOut(token) };
}

/** reservation_id is an int in 2.1.1 (mod_commands.md 3.2), a CiString(36) in 2.2.1: its decimal form. */
export function reserveNowIn(command: W.ReserveNow, owner: Owner): ReserveNow {
  return { ...command, token: tokenIn(command.token, owner), reservation_id: String(command.reservation_id) };
}

// A reservation id the Charge Point reads as an OCPP integer (32 bits).
const INT_ID = /^(0|[1-9][0-9]{0,9})$/;

/** A reservation_id that is no int (at most 2147483647) is not representable; authorization_reference is dropped. */
export function reserveNowOut(command: ReserveNow): W.ReserveNow {
  const { authorization_reference: _a, token, reservation_id, ...same } = command;
  const id = INT_ID.test(reservation_id) ? Number(reservation_id) : Number.NaN;
  if (!(id <= 2_147_483_647)) throw new NotRepresentableError('2.1.1', 'ReserveNow', `reservation_id ${reservation_id} is no int`);
  return { ...same, token: tokenOut(token), reservation_id: id };
}

export const stopSessionIn = (command: W.StopSession): StopSession => ({ ...command });
export const stopSessionOut = (command: StopSession): W.StopSession => ({ ...command });
export const unlockConnectorIn = (command: W.UnlockConnector): UnlockConnector => ({ ...command });
export const unlockConnectorOut = (command: UnlockConnector): W.UnlockConnector => ({ ...command });

/**
 * A 2.1.1 CPO's synchronous answer to a command. 2.2.1 requires timeout (mod_commands.asciidoc 13.3.1):
 * the seconds the hub waits for the result, passed in. TIMEOUT has no 2.2.1 CommandResponseType: REJECTED.
 */
export function commandResponseIn(response: W.CommandResponse, timeout: number): CommandResponse {
  return { result: response.result === 'TIMEOUT' ? 'REJECTED' : response.result, timeout };
}

/** The canonical CommandResponse as 2.1.1: timeout and message dropped; every 2.2.1 result exists in 2.1.1. */
export function commandResponseOut(response: CommandResponse): W.CommandResponse {
  return { result: response.result };
}

/** A 2.1.1 CPO's CommandResponse POSTed to the response_url, as a CommandResult: UNKNOWN_SESSION (no CommandResultType) is REJECTED. */
export function commandResultIn(response: W.CommandResponse): CommandResult {
  return { result: response.result === 'UNKNOWN_SESSION' ? 'REJECTED' : response.result };
}

const RESULT_OUT: Readonly<Record<CommandResult['result'], Result211>> = {
  ACCEPTED: 'ACCEPTED',
  // Only a CANCEL_RESERVATION has this result, and 2.1.1 has none.
  CANCELED_RESERVATION: 'ACCEPTED',
  EVSE_OCCUPIED: 'REJECTED',
  EVSE_INOPERATIVE: 'REJECTED',
  FAILED: 'REJECTED',
  NOT_SUPPORTED: 'NOT_SUPPORTED',
  REJECTED: 'REJECTED',
  TIMEOUT: 'TIMEOUT',
  UNKNOWN_RESERVATION: 'REJECTED',
};

/** A canonical CommandResult as the CommandResponse a 2.1.1 eMSP gets at its response_url; message dropped. */
export function commandResultOut(result: CommandResult): W.CommandResponse {
  return compact({ result: RESULT_OUT[result.result] });
}
