import { inTransaction, pgPool, type Pool } from './pg-pool.ts';
import type { Database } from './pool.ts';
import type { DeliveryQueue, DeliveryState, EnqueueReport } from '@hub/core';
import { DELIVERIES_CHANNEL, RECIPIENT_CC, RECIPIENT_PID, toDelivery, where, type Row } from './delivery-rows.ts';
import { enqueueFolded, enqueueJoined, isPlainEnqueue, type EnqueueCall } from './delivery-enqueue.ts';
import { groupCommit } from './group-commit.ts';

// The delivery queue (reference design, Delivery rules): durable deliveries of sessions,
// CDRs and command results to eMSPs, claimed per eMSP by the dispatcher's delivery workers, listed and
// re-driven by operators. Where each goes is the RoutingDirectory's (postgres-routing-directory.ts).


export function postgresDeliveryQueue(db: Database): DeliveryQueue {
  const pool = pgPool(db);
  return {
    ...enqueueing(pool),
    claimDue: claimDue(pool),
    delivered: deliveredInBatches(pool),
    ...attemptOutcomes(pool),
    ...operatorActions(pool),
  };
}

/** Writing the dispatcher's rows, and the consumer positions they are written with. */
function enqueueing(pool: Pool): Pick<DeliveryQueue, 'enqueue' | 'sessionExists' | 'deliveryPositions' | 'resetDeliveryPositions' | 'enqueueForced'> {
  // The dispatcher consumes several partitions at once: their plain batches share one statement and
  // commit (group commit: a batch arriving while none is written goes at once). A joined statement
  // that fails is retried batch by batch, so a record Postgres refuses is isolated as before.
  const enqueuePlain = groupCommit<EnqueueCall, EnqueueReport>({
    batch: (calls) => enqueueJoined(pool, calls),
    maxBatch: 16,
    single: async (call) => (await enqueueFolded(pool, call.rows, false, call.position, call.quarantine)).report,
  });
  return {
    async enqueue(rows, position, quarantine) {
      if (isPlainEnqueue(rows)) return enqueuePlain({ rows, position, quarantine });
      return (await enqueueFolded(pool, rows, false, position, quarantine)).report;
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
    async resetDeliveryPositions(consumerGroup, topic, partitions, startAt) {
      await inTransaction(pool, async (client) => {
        await client.query('delete from delivery_positions where consumer_group = $1 and topic = $2', [consumerGroup, topic]);
        await client.query('insert into delivery_positions (consumer_group, topic, partition, next_offset) select $1, $2, p, o from unnest($3::int[], $4::bigint[]) as x(p, o)', [
          consumerGroup,
          topic,
          [...partitions],
          partitions.map((p) => (startAt?.get(p) ?? 0n).toString()),
        ]);
      });
    },
    enqueueForced: async (rows) => (await enqueueFolded(pool, rows, true)).n,
  };
}

function claimDue(pool: Pool): DeliveryQueue['claimDue'] {
  return async (limit, inFlight, perEmspCap, claimMs) => {
    // Recipient by recipient (the eMSP of a session, the CPO of a token; migration 018): each gets at
    // most its free slots of its oldest due records (index deliveries_pending_recipient), so the cost
    // does not grow with one party's backlog. The recipients with pending rows are found by skipping
    // through that index, one probe per recipient (a DISTINCT read every due entry, 0.5 s
    // at a backlog of a million rows).
    const { rows } = await pool.query<Row>(
      `with recursive recipients as (
         (select ${RECIPIENT_CC} as cc, ${RECIPIENT_PID} as pid from deliveries
           where state = 'pending' order by 1, 2 limit 1)
         union all
         select n.cc, n.pid from recipients e
         cross join lateral (
           select ${RECIPIENT_CC} as cc, ${RECIPIENT_PID} as pid from deliveries
            where state = 'pending' and (${RECIPIENT_CC}, ${RECIPIENT_PID}) > (e.cc, e.pid)
            order by 1, 2 limit 1) n),
       picked as (
         select p.id from recipients e
         cross join lateral (
           select d.id, d.next_attempt_at from deliveries d
            where d.state = 'pending' and ${RECIPIENT_CC} = e.cc and ${RECIPIENT_PID} = e.pid
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
  };
}

/** Marks a claimed row delivered at the offset it carried. */
function deliveredInBatches(pool: Pool): DeliveryQueue['delivered'] {
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
  return (id, offset) =>
    new Promise<void>((resolve, reject) => {
      completions.push({ id, offset, resolve, reject });
      if (!completing) void flushCompletions();
    });
}

/** What became of a claimed row other than its delivery: a failed attempt, another eMSP, no route. */
function attemptOutcomes(pool: Pool): Pick<DeliveryQueue, 'failed' | 'reassign' | 'unroutable'> {
  return {
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
    async reassign(id, emsp, payload) {
      try {
        await pool.query(`update deliveries set emsp_country_code = $2, emsp_party_id = $3, payload = $4, updated_at = now() where id = $1`, [id, emsp.countryCode, emsp.partyId, JSON.stringify(payload)]);
        return 'reassigned';
      } catch (e) {
        // unique_violation: the eMSP's row of the same object (its own later PUT) is the one delivered.
        if ((e as { code?: unknown }).code === '23505') return 'taken';
        throw e;
      }
    },
    async unroutable(id, reason) {
      await pool.query(`update deliveries set state = 'unroutable', reason = $2, claimed_until = null, updated_at = now() where id = $1`, [id, reason]);
    },
  };
}

/** The operator's view and redrive of the queue (hubctl deliveries). */
function operatorActions(pool: Pool): Pick<DeliveryQueue, 'list' | 'redrive' | 'backlog'> {
  return {
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
      // By receiving party (the eMSP, or the CPO of a token): a CPO that hangs shows its own backlog.
      const { rows } = await pool.query<{ emsp: string; state: DeliveryState; count: string }>(
        `select ${RECIPIENT_CC} || '/' || ${RECIPIENT_PID} as emsp, state, count(*) as count from deliveries where state <> 'delivered' group by 1, 2`,
      );
      return rows.map((r) => ({ emsp: r.emsp, state: r.state, count: Number(r.count) }));
    },
  };
}
