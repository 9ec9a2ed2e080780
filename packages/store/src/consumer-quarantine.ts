import type { QuarantinedRecord, QuarantineEntry, QuarantineFailure, QuarantineState, QuarantineStore } from '@hub/core';
import { pgPool } from './pg-pool.ts';
import type { Database } from './pool.ts';

// Records a consumer could not apply (migration 013). Consumers write them in the
// same transaction or statement as their position (quarantineInsertSql), so a record is either
// applied, or quarantined, or still ahead of the position: never skipped without a trace.

/**
 * Text Postgres can store: no NUL, no unpaired surrogate (the very values that made the record
 * poison must not make its quarantine fail too).
 */
export function storableText(s: string, max = 2000): string {
  return s.toWellFormed().replaceAll('\u0000', '\uFFFD').slice(0, max);
}

/** The JSON parameter quarantineInsertSql reads. */
export function quarantineParam(entries: readonly QuarantineEntry[]): string {
  return JSON.stringify(
    entries.map((e) => ({
      consumer_group: e.consumerGroup,
      topic: e.record.topic,
      partition: e.record.partition,
      offset: e.record.offset,
      key: e.record.key?.toString('base64') ?? null,
      value: e.record.value?.toString('base64') ?? null,
      headers: Object.fromEntries(Object.entries(e.record.headers).flatMap(([k, v]) => (v === undefined ? [] : [[storableText(k, 200), Buffer.from(v).toString('base64')]]))),
      ce_type: e.ceType === undefined ? null : storableText(e.ceType, 200),
      ce_id: e.ceId === undefined ? null : storableText(e.ceId, 200),
      failure_kind: e.failureKind,
      reason: storableText(e.reason),
    })),
  );
}

/**
 * Inserts the entries of parameter $n (quarantineParam). A record read again (a crash before the
 * offset commit, a rebalance) is counted, not duplicated, and keeps its state.
 */
export function quarantineInsertSql(n: number): string {
  return `insert into consumer_quarantine (consumer_group, topic, partition, "offset", record_key, record_value, record_headers, ce_type, ce_id, failure_kind, reason)
    select q.consumer_group, q.topic, q.partition, q."offset", decode(q.key, 'base64'), decode(q.value, 'base64'), q.headers, q.ce_type, q.ce_id, q.failure_kind, q.reason
      from jsonb_to_recordset($${n}::jsonb) as q(consumer_group text, topic text, partition int, "offset" bigint, key text, value text, headers jsonb, ce_type text, ce_id text, failure_kind text, reason text)
    on conflict (consumer_group, topic, partition, "offset") do update
      set last_seen_at = now(), attempts = consumer_quarantine.attempts + 1`;
}

interface Row {
  id: string;
  consumer_group: string;
  topic: string;
  partition: number;
  offset: string;
  record_key: Buffer | null;
  record_value: Buffer | null;
  record_headers: Record<string, string>;
  ce_type: string | null;
  ce_id: string | null;
  failure_kind: QuarantineFailure;
  reason: string;
  state: QuarantineState;
  attempts: number;
  first_seen_at: Date;
  last_seen_at: Date;
}

const fromRow = (r: Row): QuarantinedRecord => ({
  id: r.id,
  consumerGroup: r.consumer_group,
  record: {
    topic: r.topic,
    partition: r.partition,
    offset: r.offset,
    key: r.record_key,
    value: r.record_value,
    headers: Object.fromEntries(Object.entries(r.record_headers).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  },
  ceType: r.ce_type,
  ceId: r.ce_id,
  failureKind: r.failure_kind,
  reason: r.reason,
  state: r.state,
  attempts: r.attempts,
  firstSeenAt: r.first_seen_at,
  lastSeenAt: r.last_seen_at,
});

const COLUMNS = 'id, consumer_group, topic, partition, "offset", record_key, record_value, record_headers, ce_type, ce_id, failure_kind, reason, state, attempts, first_seen_at, last_seen_at';


export function postgresQuarantineStore(db: Database): QuarantineStore {
  const pool = pgPool(db);
  return {
    async insert(entries) {
      if (entries.length > 0) await pool.query(quarantineInsertSql(1), [quarantineParam(entries)]);
    },
    async list(filter = {}) {
      const { rows } = await pool.query<Row>(
        `select ${COLUMNS} from consumer_quarantine
          where ($1::text is null or consumer_group = $1) and ($2::text[] is null or state = any($2))
          order by id`,
        [filter.consumerGroup ?? null, filter.states ?? null],
      );
      return rows.map(fromRow);
    },
    async get(id) {
      const { rows } = await pool.query<Row>(`select ${COLUMNS} from consumer_quarantine where id = $1`, [id]);
      return rows[0] ? fromRow(rows[0]) : undefined;
    },
    async requestRedrive(target) {
      const { rows } = await pool.query<{ id: string }>(
        `update consumer_quarantine set state = 'redrive'
          where state = 'quarantined' and (${'id' in target ? 'id = $1::bigint' : '$1::text is null or consumer_group = $1'})
          returning id`,
        ['id' in target ? target.id : (target.consumerGroup ?? null)],
      );
      return rows.map((r) => r.id);
    },
    async discard(id) {
      const { rowCount } = await pool.query(`update consumer_quarantine set state = 'discarded', resolved_at = now() where id = $1 and state in ('quarantined', 'redrive')`, [id]);
      return (rowCount ?? 0) > 0;
    },
    async openCounts() {
      const { rows } = await pool.query<{ consumer_group: string; topic: string; n: number }>(
        `select consumer_group, topic, count(*)::int as n from consumer_quarantine where state in ('quarantined', 'redrive') group by 1, 2`,
      );
      return rows.map((r) => ({ consumerGroup: r.consumer_group, topic: r.topic, count: r.n }));
    },
    async pendingRedrives(consumerGroup, limit) {
      const { rows } = await pool.query<Row>(`select ${COLUMNS} from consumer_quarantine where consumer_group = $1 and state = 'redrive' order by id limit $2`, [consumerGroup, limit]);
      return rows.map(fromRow);
    },
    async resolveRedrive(id, outcome) {
      await pool.query(
        `update consumer_quarantine set state = $2, reason = coalesce($3, reason), resolved_at = case when $2 = 'quarantined' then null else now() end,
                attempts = attempts + 1, last_seen_at = now()
          where id = $1 and state = 'redrive'`,
        [id, outcome.state, outcome.state === 'quarantined' ? storableText(outcome.reason) : null],
      );
    },
  };
}
