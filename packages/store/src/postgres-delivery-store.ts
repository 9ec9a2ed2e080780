import { inTransaction, type Pool, type PoolClient } from './pool.ts';
import { quarantineInsertSql, quarantineParam, type QuarantineEntry } from './consumer-quarantine.ts';
import { foldSessionEvents, sessionKey, type SessionFold, type StoredSession } from './session-fold.ts';
import { utcTime } from './utc-time.ts';

// Durable deliveries of sessions and CDRs to eMSPs (issue #4; reference design, Delivery rules), and
// the CDRs as received.

type Json = Record<string, unknown>;

export type DeliveryKind = 'session' | 'cdr' | 'command_result';
export type DeliveryState = 'pending' | 'delivered' | 'dead' | 'unroutable';

export interface DeliveryInput {
  readonly kind: DeliveryKind;
  readonly emsp: { countryCode: string; partyId: string };
  readonly cpo: { countryCode: string; partyId: string };
  readonly objectId: string;
  readonly partition: number;
  readonly offset: string;
  readonly payload: Json;
  readonly correlationId: string | undefined;
  readonly eventTime: string;
  /** command_result only: the eMSP's response_url. */
  readonly targetUrl?: string;
  /**
   * session only: the payload is a Session PATCH, merged into the session the hub holds
   * (session-fold.ts); `emsp` is then ignored (a PATCH need not carry cdr_token).
   */
  readonly patch?: boolean;
}

export interface Delivery {
  readonly id: string;
  readonly kind: DeliveryKind;
  readonly emsp: { countryCode: string; partyId: string };
  readonly cpo: { countryCode: string; partyId: string };
  readonly objectId: string;
  readonly offset: string;
  readonly payload: Json;
  readonly correlationId: string | undefined;
  readonly eventTime: Date;
  readonly state: DeliveryState;
  readonly reason: string | undefined;
  readonly attempts: number;
  readonly nextAttemptAt: Date;
  readonly lastError: string | undefined;
  readonly createdAt: Date;
  readonly targetUrl: string | undefined;
}

export interface DeliveryFilter {
  readonly states?: readonly DeliveryState[];
  readonly emsp?: { countryCode: string; partyId: string };
  readonly cpo?: { countryCode: string; partyId: string };
  readonly reason?: string;
  readonly olderThanSeconds?: number;
  readonly id?: string;
  readonly limit?: number;
}

export type DeliveryTarget =
  | { readonly ok: true; readonly url: string; readonly partnerTokenSealed: Buffer }
  | { readonly ok: false; readonly reason: string };

export type CdrReceipt = 'new' | 'retry-append' | 'duplicate' | 'conflict';

/** Where a consumer stands after the rows it enqueues: stored in the same statement as them. */
export interface DeliveryPosition {
  readonly consumerGroup: string;
  readonly topic: string;
  readonly partition: number;
  readonly nextOffset: string;
}

interface Row {
  id: string;
  kind: DeliveryKind;
  emsp_country_code: string;
  emsp_party_id: string;
  cpo_country_code: string;
  cpo_party_id: string;
  object_id: string;
  source_offset: string;
  payload: Json;
  correlation_id: string | null;
  event_time: Date;
  state: DeliveryState;
  reason: string | null;
  attempts: number;
  next_attempt_at: Date;
  last_error: string | null;
  created_at: Date;
  target_url: string | null;
}

const toDelivery = (r: Row): Delivery => ({
  id: r.id,
  kind: r.kind,
  emsp: { countryCode: r.emsp_country_code, partyId: r.emsp_party_id },
  cpo: { countryCode: r.cpo_country_code, partyId: r.cpo_party_id },
  objectId: r.object_id,
  offset: r.source_offset,
  payload: r.payload,
  correlationId: r.correlation_id ?? undefined,
  eventTime: r.event_time,
  state: r.state,
  reason: r.reason ?? undefined,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at,
  lastError: r.last_error ?? undefined,
  createdAt: r.created_at,
  targetUrl: r.target_url ?? undefined,
});

function where(filter: DeliveryFilter, params: unknown[]): string {
  const clauses: string[] = [];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    clauses.push(sql.replace('?', `$${params.length}`));
  };
  if (filter.id) add('id = ?', filter.id);
  if (filter.states?.length) add('state = any(?)', filter.states);
  if (filter.emsp) {
    add('emsp_country_code = ?', filter.emsp.countryCode);
    add('emsp_party_id = ?', filter.emsp.partyId);
  }
  if (filter.cpo) {
    add('cpo_country_code = ?', filter.cpo.countryCode);
    add('cpo_party_id = ?', filter.cpo.partyId);
  }
  if (filter.reason) add("coalesce(reason, last_error, '') ilike ?", `%${filter.reason}%`);
  if (filter.olderThanSeconds !== undefined) add("created_at < now() - (? * interval '1 second')", filter.olderThanSeconds);
  return clauses.length ? `where ${clauses.join(' and ')}` : '';
}

export const DELIVERIES_CHANNEL = 'hub_deliveries';

export interface DeliveryStore {
  /** Records a received CDR before its append (see migration 004). */
  receiveCdr(cdr: { countryCode: string; partyId: string; id: string; contentHash: string; document: Json }): Promise<CdrReceipt>;
  markCdrAppended(cdr: { countryCode: string; partyId: string; id: string }): Promise<void>;
  /**
   * CDRs received (validated, the CPO told to retry) whose append never completed, oldest first: the
   * append failed or timed out and the CPO has not posted them again within `olderThanSeconds`.
   */
  unappendedCdrs(olderThanSeconds: number, limit: number): Promise<Array<{ countryCode: string; partyId: string; id: string; contentHash: string; document: Json }>>;
  /** How many received CDRs are not on Kafka yet. */
  unappendedCdrCount(): Promise<number>;
  findCdr(cdr: { countryCode: string; partyId: string; id: string }): Promise<Json | undefined>;

  /**
   * Turns consumed events into delivery rows. Newest wins: a session row is replaced only by a later
   * version (its last_updated, then a higher offset of the same key), which makes a redelivered or
   * replayed event a no-op and never lets an older session state overwrite a newer one, even one that
   * reached Kafka late. A CDR row is never replaced: a CDR appended twice is delivered once.
   */
  /**
   * `quarantine`: records of the same batch that cannot become rows (migration 013), written in the
   * same statement as the rows and the position, so a record is never both past the position and lost.
   */
  enqueue(rows: readonly DeliveryInput[], position?: DeliveryPosition, quarantine?: readonly QuarantineEntry[]): Promise<EnqueueReport>;
  /**
   * Whether the hub holds the session: a delivery row made from a PUT of it (any eMSP); the id is a
   * CiString (types.asciidoc). The ingress asks this before accepting a Session PATCH.
   */
  sessionExists(cpo: { countryCode: string; partyId: string }, sessionId: string): Promise<boolean>;
  /** The stored positions of a consumer group in a topic (next offset per partition). */
  deliveryPositions(consumerGroup: string, topic: string): Promise<Map<number, bigint>>;
  /** Operator replay: the rows are made pending again even when delivered before. */
  enqueueForced(rows: readonly DeliveryInput[]): Promise<number>;
  /**
   * Claims due rows for delivery, at most `perEmspCap` minus what is already in flight per eMSP
   * ("CC/PID" -> count), so one eMSP's backlog never takes the slots of the others.
   */
  claimDue(limit: number, inFlight: ReadonlyMap<string, number>, perEmspCap: number, claimMs: number): Promise<Delivery[]>;
  delivered(id: string, offset: string): Promise<void>;
  failed(id: string, offset: string, error: string, retryInMs: number | undefined): Promise<void>;
  unroutable(id: string, reason: string): Promise<void>;
  /** Where and with which token to deliver, resolved at delivery time from the registry. */
  target(kind: DeliveryKind, emsp: { countryCode: string; partyId: string }, cpo: { countryCode: string; partyId: string }, targetUrl?: string): Promise<DeliveryTarget>;
  /**
   * The receiver endpoint of `module` at one side of an eMSP-CPO pair (the eMSP for sessions and
   * CDRs, the CPO for token authorization and commands), with the checks every forward needs: the
   * party exists and is not suspended, an active routing rule joins the pair, a URL is known (operator
   * override first), and the party registered its credentials.
   */
  receiverTarget(
    receiverRole: 'EMSP' | 'CPO',
    module: string,
    emsp: { countryCode: string; partyId: string },
    cpo: { countryCode: string; partyId: string },
    /** A URL given with the request (a command's response_url) instead of a registered endpoint. */
    fixedUrl?: string,
  ): Promise<DeliveryTarget>;
  list(filter: DeliveryFilter): Promise<Delivery[]>;
  /** Makes matching dead or unroutable rows pending again; returns how many. */
  redrive(filter: DeliveryFilter): Promise<number>;
  backlog(): Promise<Array<{ emsp: string; state: DeliveryState; count: number }>>;
}

/** What enqueue did with Session PATCHes: applied (merged), or not and why (session-fold.ts). */
export type EnqueueReport = Pick<SessionFold, 'applied' | 'unapplied'>;

/**
 * The version time of a session (its last_updated, as UTC; a DateTime without a zone is UTC,
 * types.asciidoc), null for other kinds or a value that is not an OCPI DateTime.
 */
export function sourceTime(r: DeliveryInput): string | null {
  return r.kind === 'session' ? utcTime(r.payload['last_updated'], 'utc') : null;
}

/** Whether r replaces seen (same delivery key): by the session's version time, then by offset. */
function isNewer(r: DeliveryInput, seen: DeliveryInput): boolean {
  const [a, b] = [sourceTime(r), sourceTime(seen)];
  if (a !== null && b !== null && a !== b) return a > b;
  return BigInt(r.offset) > BigInt(seen.offset);
}

/** The received CDR with $1 country code, $2 party id and $3 id (a CiString: any case, migration 012). */
const SAME_CDR = 'country_code = $1 and party_id = $2 and upper(id) = upper($3)';
/** What a CDR post is, against the one already received ($4: the post's content hash). */
const CDR_RECEIPT = "case when content_hash <> $4 then 'conflict' when state = 'appended' then 'duplicate' else 'retry-append' end";

export function postgresDeliveryStore(pool: Pool): DeliveryStore {
  // Successful deliveries are recorded in batches: one UPDATE for every completion that arrived while
  // the previous one ran. A crash before it commits only means the claim expires and the record is
  // delivered again (at least once; receivers dedupe by id).
  let completions: Array<{ id: string; offset: string; resolve: () => void; reject: (e: unknown) => void }> = [];
  let completing = false;
  const flushCompletions = async (): Promise<void> => {
    completing = true;
    while (completions.length > 0) {
      const batch = completions;
      completions = [];
      try {
        // A newer version that arrived during the call stays pending: it is delivered next.
        await pool.query(
          `update deliveries d set
             state = case when d.source_offset = c.off then 'delivered' else 'pending' end,
             attempts = case when d.source_offset = c.off then d.attempts else 0 end,
             delivered_offset = greatest(coalesce(d.delivered_offset, -1), c.off), delivered_at = now(),
             claimed_until = null, last_error = null, next_attempt_at = now(), updated_at = now()
           from unnest($1::bigint[], $2::bigint[]) as c(id, off)
           where d.id = c.id`,
          [batch.map((c) => c.id), batch.map((c) => c.offset)],
        );
        for (const c of batch) c.resolve();
      } catch (e) {
        for (const c of batch) c.reject(e);
      }
    }
    completing = false;
  };
  const upsert = async (db: Pool | PoolClient, input: readonly DeliveryInput[], forced: boolean, position?: DeliveryPosition, quarantine: readonly QuarantineEntry[] = []): Promise<number> => {
    // One row per object: within a batch the newest event of each session wins before the upsert
    // (an INSERT ... ON CONFLICT may touch a row only once).
    const newest = new Map<string, DeliveryInput>();
    for (const r of input) {
      const key = [r.kind, r.emsp.countryCode, r.emsp.partyId, r.cpo.countryCode, r.cpo.partyId, r.objectId].join('\u0000');
      const seen = newest.get(key);
      if (!seen || isNewer(r, seen)) newest.set(key, r);
    }
    const rows = [...newest.values()];
    // The position moves with the rows, in the same statement, and never backwards.
    const positionParams = position ? [position.consumerGroup, position.topic, position.partition, position.nextOffset] : [];
    const movePosition = (first: number) =>
      `insert into delivery_positions (consumer_group, topic, partition, next_offset) values ($${first}, $${first + 1}, $${first + 2}, $${first + 3}::bigint)
       on conflict (consumer_group, topic, partition) do update
         set next_offset = greatest(delivery_positions.next_offset, excluded.next_offset), updated_at = now()`;
    if (rows.length === 0) {
      if (quarantine.length > 0) {
        await db.query(`with q as (${quarantineInsertSql(1)} returning 1)${position ? `, moved as (${movePosition(2)} returning 1)` : ''} select (select count(*) from q)`, [quarantineParam(quarantine), ...positionParams]);
      } else if (position) await db.query(movePosition(1), positionParams);
      return 0;
    }
    const col = <T>(f: (r: DeliveryInput) => T) => rows.map(f);
    // One round trip: the upsert and the wake-up of the delivery workers (NOTIFY is sent at commit).
    const result = await db.query<{ n: string }>(
      `with upserted as (
       insert into deliveries (kind, emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id, object_id,
                               source_partition, source_offset, payload, correlation_id, event_time, target_url, source_time, state)
       select * , 'pending' from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                                      $7::int[], $8::bigint[], $9::jsonb[], $10::text[], $11::timestamptz[], $12::text[], $13::timestamptz[])
       on conflict (kind, emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id, object_id) do update set
         source_partition = excluded.source_partition, source_offset = excluded.source_offset, payload = excluded.payload,
         correlation_id = excluded.correlation_id, event_time = excluded.event_time, source_time = excluded.source_time,
         state = 'pending', reason = null, attempts = 0, next_attempt_at = now(), last_error = null, updated_at = now()
       -- Newest wins (reference design, Delivery rules). A CDR never changes (mod_cdrs.asciidoc): one
       -- appended again is not delivered again, unless an operator replays it. A session is newer by
       -- its last_updated, then by offset (the same key stays in one partition).
       where case
         when excluded.kind = 'cdr' then ${forced ? 'true' : 'false'}
         when excluded.source_time is not null and deliveries.source_time is not null and excluded.source_time <> deliveries.source_time
           then excluded.source_time > deliveries.source_time
         else excluded.source_offset ${forced ? '>=' : '>'} deliveries.source_offset end
       returning 1)${position ? `, moved as (${movePosition(14)})` : ''}${quarantine.length > 0 ? `, quarantined as (${quarantineInsertSql(position ? 18 : 14)})` : ''}
       select (select count(*) from upserted) as n, pg_notify('${DELIVERIES_CHANNEL}', '')`,
      [
        col((r) => r.kind),
        col((r) => r.emsp.countryCode),
        col((r) => r.emsp.partyId),
        col((r) => r.cpo.countryCode),
        col((r) => r.cpo.partyId),
        col((r) => r.objectId),
        col((r) => r.partition),
        col((r) => r.offset),
        col((r) => JSON.stringify(r.payload)),
        col((r) => r.correlationId ?? null),
        col((r) => r.eventTime),
        col((r) => r.targetUrl ?? null),
        col(sourceTime),
        ...positionParams,
        ...(quarantine.length > 0 ? [quarantineParam(quarantine)] : []),
      ],
    );
    return Number(result.rows[0]?.n ?? 0);
  };
  // Batches with Session PATCHes: read the sessions they patch (locked until commit, so nothing
  // changes them between the read and the write), fold the batch in its order, upsert the result.
  // Batches without one keep the single statement.
  // A forced (replay) batch is for one eMSP: the eMSP of its rows.
  const enqueueFolded = async (input: readonly DeliveryInput[], forced: boolean, position?: DeliveryPosition, quarantine: readonly QuarantineEntry[] = []): Promise<{ n: number; report: EnqueueReport }> => {
    const patches = input.filter((r) => r.kind === 'session' && r.patch);
    if (patches.length === 0) return { n: await upsert(pool, input, forced, position, quarantine), report: { applied: 0, unapplied: [] } };
    const replayTo = forced ? patches[0]?.emsp : undefined;
    return inTransaction(pool, async (client) => {
      const sessions = [...new Map(patches.map((r) => [sessionKey(r.cpo, r.objectId), r])).values()];
      const { rows } = await client.query<{ emsp_country_code: string; emsp_party_id: string; cpo_country_code: string; cpo_party_id: string; object_id: string; source_partition: number; source_offset: string; source_time: Date | null; payload: Json }>(
        `select emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id, object_id, source_partition, source_offset, source_time, payload
           from deliveries
          where kind = 'session'
            and (cpo_country_code, cpo_party_id, upper(object_id)) in (select * from unnest($1::text[], $2::text[], $3::text[]))
          order by id
          for update`,
        [sessions.map((r) => r.cpo.countryCode.toUpperCase()), sessions.map((r) => r.cpo.partyId.toUpperCase()), sessions.map((r) => r.objectId.toUpperCase())],
      );
      const stored: StoredSession[] = rows.map((r) => ({
        emsp: { countryCode: r.emsp_country_code, partyId: r.emsp_party_id },
        cpo: { countryCode: r.cpo_country_code, partyId: r.cpo_party_id },
        objectId: r.object_id,
        partition: r.source_partition,
        offset: r.source_offset,
        sourceTime: r.source_time ? r.source_time.toISOString() : null,
        payload: r.payload,
      }));
      const fold = foldSessionEvents(input, stored, replayTo);
      return { n: await upsert(client, fold.rows, forced, position, quarantine), report: { applied: fold.applied, unapplied: fold.unapplied } };
    });
  };

  return {
    async receiveCdr(cdr) {
      // One statement, one round trip: insert, or tell what is already there.
      const { rows } = await pool.query<{ receipt: CdrReceipt }>(
        `with inserted as (
           insert into cdrs (country_code, party_id, id, content_hash, document, state) values ($1, $2, $3, $4, $5, 'pending')
           on conflict do nothing returning 'new'::text as receipt)
         select receipt from inserted
         union all
         select ${CDR_RECEIPT} from cdrs where ${SAME_CDR} and not exists (select 1 from inserted)`,
        [cdr.countryCode, cdr.partyId, cdr.id, cdr.contentHash, JSON.stringify(cdr.document)],
      );
      if (rows[0]) return rows[0].receipt;
      // Inserted by a concurrent request after this statement's snapshot: what it inserted is visible
      // to a new statement, and must be compared like any other (a different CDR under the same id
      // is a conflict, mod_cdrs.asciidoc: a CDR cannot be changed once sent).
      const again = await pool.query<{ receipt: CdrReceipt }>(
        `select ${CDR_RECEIPT} as receipt from cdrs where ${SAME_CDR}`,
        [cdr.countryCode, cdr.partyId, cdr.id, cdr.contentHash],
      );
      return again.rows[0]?.receipt ?? 'retry-append';
    },
    async markCdrAppended(cdr) {
      await pool.query(`update cdrs set state = 'appended', appended_at = now() where ${SAME_CDR}`, [
        cdr.countryCode,
        cdr.partyId,
        cdr.id,
      ]);
    },
    async unappendedCdrs(olderThanSeconds, limit) {
      const { rows } = await pool.query<{ country_code: string; party_id: string; id: string; content_hash: string; document: Json }>(
        `select country_code, party_id, id, content_hash, document from cdrs
          where state = 'pending' and created_at < now() - ($1 * interval '1 second') order by created_at limit $2`,
        [olderThanSeconds, limit],
      );
      return rows.map((r) => ({ countryCode: r.country_code, partyId: r.party_id, id: r.id, contentHash: r.content_hash, document: r.document }));
    },
    async unappendedCdrCount() {
      const { rows } = await pool.query<{ n: string }>("select count(*) as n from cdrs where state = 'pending'");
      return Number(rows[0]?.n ?? 0);
    },
    async findCdr(cdr) {
      const { rows } = await pool.query<{ document: Json }>(
        `select document from cdrs where ${SAME_CDR} and state = 'appended'`,
        [cdr.countryCode, cdr.partyId, cdr.id],
      );
      return rows[0]?.document;
    },
    async enqueue(rows, position, quarantine) {
      return (await enqueueFolded(rows, false, position, quarantine)).report;
    },
    async sessionExists(cpo, sessionId) {
      const { rows } = await pool.query(
        "select 1 from deliveries where kind = 'session' and cpo_country_code = upper($1) and cpo_party_id = upper($2) and upper(object_id) = upper($3) limit 1",
        [cpo.countryCode, cpo.partyId, sessionId],
      );
      return rows.length > 0;
    },
    async deliveryPositions(consumerGroup, topic) {
      const { rows } = await pool.query<{ partition: number; next_offset: string }>(
        'select partition, next_offset from delivery_positions where consumer_group = $1 and topic = $2',
        [consumerGroup, topic],
      );
      return new Map(rows.map((r) => [r.partition, BigInt(r.next_offset)]));
    },
    enqueueForced: async (rows) => (await enqueueFolded(rows, true)).n,

    async claimDue(limit, inFlight, perEmspCap, claimMs) {
      // eMSP by eMSP: each gets at most its free slots of its oldest due records (index
      // deliveries_pending_emsp), so the cost does not grow with one eMSP's backlog.
      const { rows } = await pool.query<Row>(
        `with emsps as (
           select distinct emsp_country_code as cc, emsp_party_id as pid
             from deliveries where state = 'pending' and next_attempt_at <= now()),
         picked as (
           select p.id from emsps e
           cross join lateral (
             select d.id, d.next_attempt_at from deliveries d
              where d.state = 'pending' and d.emsp_country_code = e.cc and d.emsp_party_id = e.pid
                and d.next_attempt_at <= now() and (d.claimed_until is null or d.claimed_until < now())
              order by d.next_attempt_at, d.id
              limit greatest(0, $4::int - coalesce(($2::jsonb ->> (e.cc || '/' || e.pid))::int, 0))
              for update skip locked) p
           order by p.next_attempt_at, p.id
           limit $1)
         update deliveries d set claimed_until = now() + ($3 * interval '1 millisecond'), attempts = d.attempts + 1, updated_at = now()
          where d.id in (select id from picked)
          returning d.*`,
        [limit, JSON.stringify(Object.fromEntries(inFlight)), claimMs, perEmspCap],
      );
      return rows.map(toDelivery);
    },
    delivered(id, offset) {
      return new Promise<void>((resolve, reject) => {
        completions.push({ id, offset, resolve, reject });
        if (!completing) void flushCompletions();
      });
    },
    async failed(id, offset, error, retryInMs) {
      await pool.query(
        `update deliveries set
           state = case when $4::bigint is null and source_offset = $2 then 'dead' else 'pending' end,
           next_attempt_at = now() + (coalesce($4::bigint, 0) * interval '1 millisecond'),
           claimed_until = null, last_error = $3, updated_at = now()
         where id = $1`,
        [id, offset, error.slice(0, 1000), retryInMs ?? null],
      );
    },
    async unroutable(id, reason) {
      await pool.query(`update deliveries set state = 'unroutable', reason = $2, claimed_until = null, updated_at = now() where id = $1`, [id, reason]);
    },

    target(kind, emsp, cpo, targetUrl) {
      return this.receiverTarget('EMSP', kind === 'session' ? 'sessions' : kind === 'cdr' ? 'cdrs' : 'commands', emsp, cpo, targetUrl);
    },

    async receiverTarget(receiverRole, module, emsp, cpo, fixedUrl) {
      const receiver = receiverRole === 'EMSP' ? emsp : cpo;
      const { rows } = await pool.query<{
        party: boolean;
        suspended: boolean;
        rule: boolean;
        registered: boolean;
        sealed: Buffer | null;
        override_url: string | null;
        endpoint_url: string | null;
      }>(
        `select p.country_code is not null as party, p.suspended_at is not null as suspended,
                exists (select 1 from routing_rules r where r.enabled and r.emsp_country_code = $1 and r.emsp_party_id = $2
                          and r.cpo_country_code = $3 and r.cpo_party_id = $4) as rule,
                pl.registered_at is not null as registered, pl.partner_token_sealed as sealed,
                (select url from endpoint_overrides o where o.country_code = $6 and o.party_id = $7 and o.role = $8 and o.module = $5) as override_url,
                (select url from partner_endpoints e where e.platform_id = p.platform_id and e.identifier = $5 and e.role = 'RECEIVER') as endpoint_url
           from (select 1) one
           left join parties p on p.country_code = $6 and p.party_id = $7 and p.role = $8
           left join platforms pl on pl.id = p.platform_id`,
        [emsp.countryCode, emsp.partyId, cpo.countryCode, cpo.partyId, module, receiver.countryCode, receiver.partyId, receiverRole],
      );
      const r = rows[0];
      const who = `${receiverRole === 'EMSP' ? 'eMSP' : 'CPO'} ${receiver.countryCode}/${receiver.partyId}`;
      // Interface document, Events, rule 2: a known party, an active routing rule and a receiver URL.
      if (!r?.party) return { ok: false, reason: `unknown ${who}` };
      if (r.suspended) return { ok: false, reason: `${who} suspended` };
      if (!r.rule) return { ok: false, reason: `no active routing rule ${emsp.countryCode}/${emsp.partyId} <- ${cpo.countryCode}/${cpo.partyId}` };
      const url = fixedUrl ?? r.override_url ?? r.endpoint_url;
      if (!url) return { ok: false, reason: `no ${module} receiver URL for the ${receiverRole === 'EMSP' ? 'eMSP' : 'CPO'}` };
      if (!r.registered || !r.sealed) return { ok: false, reason: `${who} has no credentials registered` };
      return { ok: true, url, partnerTokenSealed: r.sealed };
    },

    async list(filter) {
      const params: unknown[] = [];
      const sql = `select * from deliveries ${where(filter, params)} order by id limit ${Math.max(1, Math.min(filter.limit ?? 1000, 100_000))}`;
      return (await pool.query<Row>(sql, params)).rows.map(toDelivery);
    },
    async redrive(filter) {
      const params: unknown[] = [];
      // Only rows that are stuck: a pending row may be in flight, and clearing its claim would let a
      // second worker send it at the same time.
      const states = (filter.states?.length ? filter.states : (['dead', 'unroutable'] as const)).filter((s) => s === 'dead' || s === 'unroutable');
      if (states.length === 0) return 0;
      const clause = where({ ...filter, states }, params);
      const result = await pool.query(
        `update deliveries set state = 'pending', reason = null, attempts = 0, next_attempt_at = now(), claimed_until = null, updated_at = now() ${clause}`,
        params,
      );
      await pool.query(`select pg_notify('${DELIVERIES_CHANNEL}', '')`);
      return result.rowCount ?? 0;
    },
    async backlog() {
      const { rows } = await pool.query<{ emsp: string; state: DeliveryState; count: string }>(
        `select emsp_country_code || '/' || emsp_party_id as emsp, state, count(*) as count from deliveries where state <> 'delivered' group by 1, 2`,
      );
      return rows.map((r) => ({ emsp: r.emsp, state: r.state, count: Number(r.count) }));
    },
  };
}
