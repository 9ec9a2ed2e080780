import type { Pool } from './pg-pool.ts';

// The life a command (mod_commands.asciidoc) and a charging-profile request (mod_charging_profiles.asciidoc)
// share once the hub forwarded them to the CPO: 'requested'; the CPO's immediate answer makes it
// 'accepted' (a result may come until the deadline) or 'rejected'; the CPO's callback makes it 'result'
// and is forwarded to the eMSP; at the deadline an accepted one is 'timed_out' (the hub answers the eMSP
// itself), and a result after that is kept once, as late, and not forwarded. One table per kind
// (migrations 006 and 024), the same columns for this life.

type Json = Record<string, unknown>;

/** The ids the hub hands out as callback credentials (UUIDs): anything else is not one of ours. */
export const REQUEST_ID = /^[0-9a-f-]{36}$/i;

export interface AsyncRequestTable<Row> {
  answered(id: string, accepted: boolean, timeoutSeconds: number, graceSeconds: number): Promise<void>;
  result(id: string, result: Json): Promise<{ outcome: 'forward' | 'late'; row: Row } | { outcome: 'unknown' }>;
  expire(): Promise<Row[]>;
  get(id: string): Promise<(Row & { result: Json | null; late_result: Json | null }) | undefined>;
}

export function asyncRequestTable<Row>(pool: Pool, table: 'commands' | 'charging_profile_requests'): AsyncRequestTable<Row> {
  return {
    async answered(id, accepted, timeoutSeconds, graceSeconds) {
      // A callback may beat the immediate answer: only a request still 'requested' moves here.
      await pool.query(
        `update ${table} set state = case when $2 then 'accepted' else 'rejected' end,
           deadline = now() + (($3::int + $4::int) * interval '1 second'), updated_at = now()
         where id = $1 and state = 'requested'`,
        [id, accepted, timeoutSeconds, graceSeconds],
      );
    },
    async result(id, result) {
      if (!REQUEST_ID.test(id)) return { outcome: 'unknown' };
      const forwarded = await pool.query(
        `update ${table} set state = 'result', result = $2, updated_at = now() where id = $1 and state in ('requested', 'accepted') returning *`,
        [id, JSON.stringify(result)],
      );
      if (forwarded.rows[0]) return { outcome: 'forward', row: forwarded.rows[0] as Row };
      const late = await pool.query(
        `update ${table} set late_result = $2, updated_at = now() where id = $1 and state = 'timed_out' and late_result is null returning *`,
        [id, JSON.stringify(result)],
      );
      return late.rows[0] ? { outcome: 'late', row: late.rows[0] as Row } : { outcome: 'unknown' };
    },
    async expire() {
      const { rows } = await pool.query(`update ${table} set state = 'timed_out', updated_at = now() where state = 'accepted' and deadline < now() returning *`);
      return rows as Row[];
    },
    async get(id) {
      if (!REQUEST_ID.test(id)) return undefined;
      const { rows } = await pool.query(`select * from ${table} where id = $1`, [id]);
      return rows[0] as (Row & { result: Json | null; late_result: Json | null }) | undefined;
    },
  };
}
