// ChargingProfile requests forwarded to CPOs and their results (mod_charging_profiles.asciidoc, Receiver
// interface): the port the ingress's charging-profile routes and the dispatcher's timeouts use.

type Json = Record<string, unknown>;
type Party = { countryCode: string; partyId: string };

/** SET: PUT SetChargingProfile; GET: the ActiveChargingProfile; CLEAR: DELETE (Receiver interface). */
export type ChargingProfileOperation = 'SET' | 'GET' | 'CLEAR';

export interface ChargingProfileRequestRecord {
  readonly id: string;
  readonly operation: ChargingProfileOperation;
  readonly sessionId: string;
  readonly emsp: Party;
  readonly cpo: Party;
  readonly responseUrl: string;
  readonly state: 'requested' | 'accepted' | 'rejected' | 'result' | 'timed_out';
  readonly correlationId: string | undefined;
}

export interface ChargingProfileStore {
  create(r: { id: string; operation: ChargingProfileOperation; sessionId: string; emsp: Party; cpo: Party; responseUrl: string; correlationId: string }): Promise<void>;
  /** The CPO's immediate answer: ACCEPTED waits for a result until the deadline, anything else ends it. */
  answered(id: string, accepted: boolean, timeoutSeconds: number, graceSeconds: number): Promise<void>;
  /** A result from the CPO's callback: 'forward', 'late' (after the hub's timeout answer: recorded only) or 'unknown'. */
  result(id: string, result: Json): Promise<{ outcome: 'forward' | 'late' | 'unknown'; request?: ChargingProfileRequestRecord }>;
  /** Requests past their deadline become timed out; returns them (the hub answers the eMSP itself). */
  expire(): Promise<ChargingProfileRequestRecord[]>;
  /**
   * The CPOs of the session `sessionId` among the sessions the hub delivered to this eMSP (the id is a
   * CiString, types.asciidoc); several only when two CPOs use the same id.
   */
  sessionCpos(emsp: Party, sessionId: string): Promise<Party[]>;
  /** The eMSPs the hub delivered this CPO's session to (mod_charging_profiles.asciidoc, Sender interface PUT). */
  sessionEmsps(cpo: Party, sessionId: string): Promise<Party[]>;
  get(id: string): Promise<(ChargingProfileRequestRecord & { result: Json | null; lateResult: Json | null }) | undefined>;
}
