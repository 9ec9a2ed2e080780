// Commands forwarded to CPOs and their results (mod_commands.asciidoc): the port the ingress's
// commands routes and the dispatcher's timeouts use.

type Json = Record<string, unknown>;
type Party = { countryCode: string; partyId: string };

export interface CommandRecord {
  readonly id: string;
  readonly command: string;
  readonly emsp: Party;
  readonly cpo: Party;
  readonly responseUrl: string;
  readonly state: 'requested' | 'accepted' | 'rejected' | 'result' | 'timed_out';
  readonly correlationId: string | undefined;
}

export interface CommandStore {
  create(c: { id: string; command: string; emsp: Party; cpo: Party; responseUrl: string; reservationId?: string; correlationId: string }): Promise<void>;
  /** The CPO's immediate answer: ACCEPTED waits for a result until the deadline, anything else ends it. */
  answered(id: string, accepted: boolean, timeoutSeconds: number, graceSeconds: number): Promise<void>;
  /**
   * A result from the CPO's callback: 'forward' when the command was waiting for it, 'late' when it
   * had timed out (recorded, not forwarded), 'unknown' for an id that is not waiting.
   */
  result(id: string, result: Json): Promise<{ outcome: 'forward' | 'late' | 'unknown'; command?: CommandRecord }>;
  /** Commands past their deadline become timed out; returns them (the hub sends TIMEOUT itself). */
  expire(): Promise<CommandRecord[]>;
  /** The CPO a reservation was made with (CANCEL_RESERVATION). */
  reservationCpo(emsp: Party, reservationId: string): Promise<Party | undefined>;
  /** The CPO a session belongs to, from the sessions delivered to this eMSP (STOP_SESSION). */
  sessionCpo(emsp: Party, sessionId: string): Promise<Party | undefined>;
  get(id: string): Promise<(CommandRecord & { result: Json | null; lateResult: Json | null }) | undefined>;
  /** host:port of the URLs a platform registered (versions URL, endpoints): where response_urls may point. */
  registeredHosts(platformId: string): Promise<string[]>;
}
