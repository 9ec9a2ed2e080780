import type { ChargingProfileOperation, ChargingProfileRequestRecord, ChargingProfileStore } from '@hub/core';
import { pgPool } from './pg-pool.ts';
import type { Database } from './pool.ts';
import { asyncRequestTable } from './async-requests.ts';

// ChargingProfile requests forwarded to CPOs and their results (mod_charging_profiles.asciidoc, Receiver
// interface; migration 024): the same life as a command (async-requests.ts), one row per set,
// get or clear, under the id that is the CPO's callback credential.

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


export function postgresChargingProfileStore(db: Database): ChargingProfileStore {
  const pool = pgPool(db);
  const requests = asyncRequestTable<Row>(pool, 'charging_profile_requests');
  return {
    async create(r) {
      await pool.query(
        `insert into charging_profile_requests (id, operation, session_id, emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id, response_url, state, correlation_id)
         values ($1, $2, $3, $4, $5, $6, $7, $8, 'requested', $9)`,
        [r.id, r.operation, r.sessionId, r.emsp.countryCode, r.emsp.partyId, r.cpo.countryCode, r.cpo.partyId, r.responseUrl, r.correlationId],
      );
    },
    answered: (id, accepted, timeoutSeconds, graceSeconds) => requests.answered(id, accepted, timeoutSeconds, graceSeconds),
    async result(id, result) {
      const answer = await requests.result(id, result);
      return answer.outcome === 'unknown' ? answer : { outcome: answer.outcome, request: toRecord(answer.row) };
    },
    expire: async () => (await requests.expire()).map(toRecord),
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
      const r = await requests.get(id);
      return r ? { ...toRecord(r), result: r.result, lateResult: r.late_result } : undefined;
    },
  };
}
