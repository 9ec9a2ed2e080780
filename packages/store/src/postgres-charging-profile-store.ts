import type { Pool } from './pool.ts';

// ChargingProfile requests forwarded to CPOs and their results (mod_charging_profiles.asciidoc, Receiver
// interface; migration 024): the same life as a command (postgres-command-store.ts), one row per set,
// get or clear, under the id that is the CPO's callback credential.

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

interface Row {
  id: string;
  operation: ChargingProfileOperation;
  session_id: string;
  emsp_country_code: string;
  emsp_party_id: string;
  cpo_country_code: string;
  cpo_party_id: string;
  response_url: string;
  state: ChargingProfileRequestRecord['state'];
  correlation_id: string | null;
}

const toRecord = (r: Row): ChargingProfileRequestRecord => ({
  id: r.id,
  operation: r.operation,
  sessionId: r.session_id,
  emsp: { countryCode: r.emsp_country_code, partyId: r.emsp_party_id },
  cpo: { countryCode: r.cpo_country_code, partyId: r.cpo_party_id },
  responseUrl: r.response_url,
  state: r.state,
  correlationId: r.correlation_id ?? undefined,
});

const REQUEST_ID = /^[0-9a-f-]{36}$/i;

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

export function postgresChargingProfileStore(pool: Pool): ChargingProfileStore {
  return {
    async create(r) {
      await pool.query(
        `insert into charging_profile_requests (id, operation, session_id, emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id, response_url, state, correlation_id)
         values ($1, $2, $3, $4, $5, $6, $7, $8, 'requested', $9)`,
        [r.id, r.operation, r.sessionId, r.emsp.countryCode, r.emsp.partyId, r.cpo.countryCode, r.cpo.partyId, r.responseUrl, r.correlationId],
      );
    },
    async answered(id, accepted, timeoutSeconds, graceSeconds) {
      // A callback may beat the immediate answer: only a request still 'requested' moves here.
      await pool.query(
        `update charging_profile_requests set state = case when $2 then 'accepted' else 'rejected' end,
           deadline = now() + (($3::int + $4::int) * interval '1 second'), updated_at = now()
         where id = $1 and state = 'requested'`,
        [id, accepted, timeoutSeconds, graceSeconds],
      );
    },
    async result(id, result) {
      if (!REQUEST_ID.test(id)) return { outcome: 'unknown' };
      const forwarded = await pool.query<Row>(
        `update charging_profile_requests set state = 'result', result = $2, updated_at = now() where id = $1 and state in ('requested', 'accepted') returning *`,
        [id, JSON.stringify(result)],
      );
      if (forwarded.rows[0]) return { outcome: 'forward', request: toRecord(forwarded.rows[0]) };
      const late = await pool.query<Row>(
        `update charging_profile_requests set late_result = $2, updated_at = now() where id = $1 and state = 'timed_out' and late_result is null returning *`,
        [id, JSON.stringify(result)],
      );
      return late.rows[0] ? { outcome: 'late', request: toRecord(late.rows[0]) } : { outcome: 'unknown' };
    },
    async expire() {
      const { rows } = await pool.query<Row>(`update charging_profile_requests set state = 'timed_out', updated_at = now() where state = 'accepted' and deadline < now() returning *`);
      return rows.map(toRecord);
    },
    async sessionCpos(emsp, sessionId) {
      const { rows } = await pool.query<{ cc: string; pid: string }>(
        `select distinct cpo_country_code as cc, cpo_party_id as pid from deliveries
          where kind = 'session' and emsp_country_code = $1 and emsp_party_id = $2 and upper(object_id) = upper($3)`,
        [emsp.countryCode, emsp.partyId, sessionId],
      );
      return rows.map((r) => ({ countryCode: r.cc, partyId: r.pid }));
    },
    async sessionEmsps(cpo, sessionId) {
      // deliveries_session_lookup (migration 014).
      const { rows } = await pool.query<{ cc: string; pid: string }>(
        `select distinct emsp_country_code as cc, emsp_party_id as pid from deliveries
          where kind = 'session' and cpo_country_code = $1 and cpo_party_id = $2 and upper(object_id) = upper($3)`,
        [cpo.countryCode, cpo.partyId, sessionId],
      );
      return rows.map((r) => ({ countryCode: r.cc, partyId: r.pid }));
    },
    async get(id) {
      if (!REQUEST_ID.test(id)) return undefined;
      const { rows } = await pool.query<Row & { result: Json | null; late_result: Json | null }>('select * from charging_profile_requests where id = $1', [id]);
      const r = rows[0];
      return r ? { ...toRecord(r), result: r.result, lateResult: r.late_result } : undefined;
    },
  };
}
