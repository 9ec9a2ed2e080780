import type { CommandRecord, CommandStore } from '@hub/core';
import type { Pool } from './pool.ts';

// Commands forwarded to CPOs and their results.

type Json = Record<string, unknown>;

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


export function postgresCommandStore(pool: Pool): CommandStore {
  return {
    create: create(pool),
    answered: answered(pool),
    result: result(pool),
    expire: expire(pool),
    reservationCpo: reservationCpo(pool),
    sessionCpo: sessionCpo(pool),
    registeredHosts: registeredHosts(pool),
    get: get(pool),
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

function answered(pool: Pool): CommandStore['answered'] {
  return async (id, accepted, timeoutSeconds, graceSeconds) => {
    // A callback may beat the immediate answer: only a command still 'requested' moves here.
    await pool.query(
      `update commands set state = case when $2 then 'accepted' else 'rejected' end,
         deadline = now() + (($3::int + $4::int) * interval '1 second'), updated_at = now()
       where id = $1 and state = 'requested'`,
      [id, accepted, timeoutSeconds, graceSeconds],
    );
  };
}

function result(pool: Pool): CommandStore['result'] {
  return async (id, result) => {
    if (!/^[0-9a-f-]{36}$/i.test(id)) return { outcome: 'unknown' };
    const forwarded = await pool.query<Row>(
      `update commands set state = 'result', result = $2, updated_at = now() where id = $1 and state in ('requested', 'accepted') returning *`,
      [id, JSON.stringify(result)],
    );
    if (forwarded.rows[0]) return { outcome: 'forward', command: toRecord(forwarded.rows[0]) };
    const late = await pool.query<Row>(
      `update commands set late_result = $2, updated_at = now() where id = $1 and state = 'timed_out' and late_result is null returning *`,
      [id, JSON.stringify(result)],
    );
    return late.rows[0] ? { outcome: 'late', command: toRecord(late.rows[0]) } : { outcome: 'unknown' };
  };
}

function expire(pool: Pool): CommandStore['expire'] {
  return async () => {
    const { rows } = await pool.query<Row>(
      `update commands set state = 'timed_out', updated_at = now() where state = 'accepted' and deadline < now() returning *`,
    );
    return rows.map(toRecord);
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

function get(pool: Pool): CommandStore['get'] {
  return async (id) => {
    if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
    const { rows } = await pool.query<Row & { result: Json | null; late_result: Json | null }>('select * from commands where id = $1', [id]);
    const r = rows[0];
    return r ? { ...toRecord(r), result: r.result, lateResult: r.late_result } : undefined;
  };
}
