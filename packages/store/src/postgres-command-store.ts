import type { CommandRecord, CommandStore } from '@hub/core';
import { pgPool, type Pool } from './pg-pool.ts';
import type { Database } from './pool.ts';
import { asyncRequestTable } from './async-requests.ts';

// Commands forwarded to CPOs and their results; their life after forwarding is async-requests.ts.

interface Row {
  id: string;
  command: string;
  emsp_country_code: string;
  emsp_party_id: string;
  cpo_country_code: string;
  cpo_party_id: string;
  response_url: string;
  state: CommandRecord['state'];
  correlation_id: string | null;
}

const toRecord = (r: Row): CommandRecord => ({
  id: r.id,
  command: r.command,
  emsp: { countryCode: r.emsp_country_code, partyId: r.emsp_party_id },
  cpo: { countryCode: r.cpo_country_code, partyId: r.cpo_party_id },
  responseUrl: r.response_url,
  state: r.state,
  correlationId: r.correlation_id ?? undefined,
});

export function postgresCommandStore(db: Database): CommandStore {
  const pool = pgPool(db);
  const requests = asyncRequestTable<Row>(pool, 'commands');
  return {
    create: create(pool),
    answered: (id, accepted, timeoutSeconds, graceSeconds) => requests.answered(id, accepted, timeoutSeconds, graceSeconds),
    async result(id, result) {
      const answer = await requests.result(id, result);
      return answer.outcome === 'unknown' ? answer : { outcome: answer.outcome, command: toRecord(answer.row) };
    },
    expire: async () => (await requests.expire()).map(toRecord),
    reservationCpo: reservationCpo(pool),
    sessionCpo: sessionCpo(pool),
    registeredHosts: registeredHosts(pool),
    async get(id) {
      const r = await requests.get(id);
      return r ? { ...toRecord(r), result: r.result, lateResult: r.late_result } : undefined;
    },
  };
}

function create(pool: Pool): CommandStore['create'] {
  return async (c) => {
    await pool.query(
      `insert into commands (id, command, emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id, response_url, reservation_id, state, correlation_id)
       values ($1, $2, $3, $4, $5, $6, $7, $8, 'requested', $9)`,
      [c.id, c.command, c.emsp.countryCode, c.emsp.partyId, c.cpo.countryCode, c.cpo.partyId, c.responseUrl, c.reservationId ?? null, c.correlationId],
    );
  };
}

function reservationCpo(pool: Pool): CommandStore['reservationCpo'] {
  return async (emsp, reservationId) => {
    const { rows } = await pool.query<{ cc: string; pid: string }>(
      `select cpo_country_code as cc, cpo_party_id as pid from commands
        where emsp_country_code = $1 and emsp_party_id = $2 and reservation_id = $3 and command = 'RESERVE_NOW'
        order by created_at desc limit 1`,
      [emsp.countryCode, emsp.partyId, reservationId],
    );
    return rows[0] ? { countryCode: rows[0].cc, partyId: rows[0].pid } : undefined;
  };
}

function sessionCpo(pool: Pool): CommandStore['sessionCpo'] {
  return async (emsp, sessionId) => {
    const { rows } = await pool.query<{ cc: string; pid: string }>(
      `select cpo_country_code as cc, cpo_party_id as pid from deliveries
        where kind = 'session' and emsp_country_code = $1 and emsp_party_id = $2 and object_id = $3
        order by updated_at desc limit 1`,
      [emsp.countryCode, emsp.partyId, sessionId],
    );
    return rows[0] ? { countryCode: rows[0].cc, partyId: rows[0].pid } : undefined;
  };
}

function registeredHosts(pool: Pool): CommandStore['registeredHosts'] {
  return async (platformId) => {
    const { rows } = await pool.query<{ url: string }>(
      `select versions_url as url from platforms where id = $1 and versions_url is not null
       union select url from partner_endpoints where platform_id = $1`,
      [platformId],
    );
    const hosts = new Set<string>();
    for (const r of rows) {
      try {
        hosts.add(new URL(r.url).host.toLowerCase());
      } catch {
        // an unparseable registered URL allows nothing
      }
    }
    return [...hosts];
  };
}

