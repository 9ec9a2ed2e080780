// The documented rules by which the sandbox counterparts answer (docs/reference/sandbox.md). Pure
// functions, so the reference and the behaviour are tested against each other.

/** An AllowedType (mod_tokens.asciidoc, AllowedType enum), or a simulated failure of the answering party. */
export type AuthorizationOutcome = 'ALLOWED' | 'BLOCKED' | 'EXPIRED' | 'NO_CREDIT' | 'NOT_ALLOWED' | 'UNKNOWN_TOKEN' | 'NO_ANSWER';

/**
 * The outcome of a real-time authorization, by the token uid's prefix (case-insensitive). Checked in
 * this order, since NOTALLOWED must not be read as ALLOWED's neighbour.
 */
export const TOKEN_RULES: ReadonlyArray<{ prefix: string; outcome: AuthorizationOutcome; meaning: string }> = [
  { prefix: 'BLOCKED', outcome: 'BLOCKED', meaning: 'AuthorizationInfo allowed BLOCKED' },
  { prefix: 'EXPIRED', outcome: 'EXPIRED', meaning: 'AuthorizationInfo allowed EXPIRED' },
  { prefix: 'NOCREDIT', outcome: 'NO_CREDIT', meaning: 'AuthorizationInfo allowed NO_CREDIT' },
  { prefix: 'NOTALLOWED', outcome: 'NOT_ALLOWED', meaning: 'AuthorizationInfo allowed NOT_ALLOWED' },
  { prefix: 'UNKNOWN', outcome: 'UNKNOWN_TOKEN', meaning: 'HTTP 404 with OCPI 2004 (unknown token): the hub answers allowed UNKNOWN (eMSP asking) or 404 / 2004 (CPO asking)' },
  { prefix: 'TIMEOUT', outcome: 'NO_ANSWER', meaning: 'no answer at all: the hub times out after AUTHORIZE_TIMEOUT_MS and answers allowed UNKNOWN with 4002' },
];

export function authorizationOutcome(uid: string): AuthorizationOutcome {
  const upper = uid.toUpperCase();
  return TOKEN_RULES.find((r) => upper.startsWith(r.prefix))?.outcome ?? 'ALLOWED';
}

/** The five commands of mod_commands.asciidoc, CommandType enum (the hub forwards these). */
export const COMMANDS = ['START_SESSION', 'STOP_SESSION', 'RESERVE_NOW', 'CANCEL_RESERVATION', 'UNLOCK_CONNECTOR'] as const;
export type CommandName = (typeof COMMANDS)[number];

/** Locations the sandbox CPO publishes only so that commands naming them take a documented path. */
export const REJECTING_LOCATION = 'SBX-REJECT';
export const SILENT_LOCATION = 'SBX-TIMEOUT';

/**
 * What the sandbox CPO does with a command: answer REJECTED at once, or ACCEPTED and later post the
 * result (or never post it, so the hub's TIMEOUT reaches the eMSP: mod_commands.asciidoc,
 * CommandResultType TIMEOUT).
 */
export type CommandPlan =
  | { readonly answer: 'REJECTED'; readonly reason: string }
  | { readonly answer: 'ACCEPTED'; readonly result: 'ACCEPTED' | 'FAILED' | 'NONE' };

export interface CommandFacts {
  /** location_id of START_SESSION, RESERVE_NOW and UNLOCK_CONNECTOR. */
  readonly locationId?: string;
  /** STOP_SESSION: whether the session is one of the sandbox CPO's that is still PENDING or ACTIVE. */
  readonly sessionRunning?: boolean;
  /** CANCEL_RESERVATION: whether the reservation is one the sandbox CPO holds. */
  readonly reservationKnown?: boolean;
  /** START_SESSION: the outcome of the token rules for the token it carries. */
  readonly tokenOutcome?: AuthorizationOutcome;
}

export function commandPlan(command: CommandName, facts: CommandFacts): CommandPlan {
  const location = facts.locationId?.toUpperCase();
  if (location === REJECTING_LOCATION) return { answer: 'REJECTED', reason: `every command at ${REJECTING_LOCATION} is rejected` };
  if (location === SILENT_LOCATION) return { answer: 'ACCEPTED', result: 'NONE' };
  switch (command) {
    case 'STOP_SESSION':
      return facts.sessionRunning ? { answer: 'ACCEPTED', result: 'ACCEPTED' } : { answer: 'REJECTED', reason: 'no running session of the sandbox CPO with that id' };
    case 'CANCEL_RESERVATION':
      return facts.reservationKnown ? { answer: 'ACCEPTED', result: 'ACCEPTED' } : { answer: 'REJECTED', reason: 'no reservation of the sandbox CPO with that id' };
    case 'START_SESSION':
      // A token the token rules would not allow cannot charge: the charge point refuses (result FAILED).
      return { answer: 'ACCEPTED', result: facts.tokenOutcome === undefined || facts.tokenOutcome === 'ALLOWED' ? 'ACCEPTED' : 'FAILED' };
    default:
      return { answer: 'ACCEPTED', result: 'ACCEPTED' };
  }
}
