import { inTransaction, type Pool, type PoolClient } from './pg-pool.ts';
import { quarantineInsertSql, quarantineParam } from './consumer-quarantine.ts';
import { foldSessionEvents, foldTokenPatches, isNewer, sessionKey, sourceTime, type DeliveryInput, type DeliveryKind, type DeliveryPosition, type EnqueueReport, type QuarantineEntry, type SessionFold, type StoredSession } from '@hub/core';
import { deliveryRuleOf, kindsWhere, type DeliveryRule } from '@hub/modules';
import { DELIVERIES_CHANNEL } from './delivery-rows.ts';
import { expandTokenRows, loadTokensForUpdate, toEveryRoutedCpo } from './token-rows.ts';

/** The kinds whose rule says an object is delivered once (DeliveryRule.deliveredOnce). */
const DELIVERED_ONCE = kindsWhere((rule) => rule.deliveredOnce === true);

// Consumed events into delivery rows (postgres-delivery-queue.ts, enqueue and enqueueForced): the
// newest-wins upsert with the consumer's position and quarantined records in one statement, and the
// Session and Token PATCH folds (session-fold.ts, token-fold.ts) in one transaction when the batch has
// PATCHes. Which kinds fan out and how their PATCHes fold is their delivery rules' (@hub/modules).

type Json = Record<string, unknown>;

/** The payload field by which a kind's rows keep the newest version; undefined when each event is kept. */
const newestBy = (r: DeliveryInput): string | undefined => {
  const keeps = deliveryRuleOf(r.kind).keeps;
  return keeps === 'every' ? undefined : keeps.newestBy;
};

// Long because: most of it is the one upsert statement (rows, positions and the workers' wake-up in
// one round trip).
async function upsert(db: Pool | PoolClient, input: readonly DeliveryInput[], forced: boolean, positions: readonly DeliveryPosition[] = [], quarantine: readonly QuarantineEntry[] = []): Promise<number> {
  // One row per object: within a batch the newest event of each session wins before the upsert
  // (an INSERT ... ON CONFLICT may touch a row only once).
  const newest = new Map<string, DeliveryInput>();
  for (const r of input) {
    const key = [r.kind, r.emsp.countryCode, r.emsp.partyId, r.cpo.countryCode, r.cpo.partyId, r.objectId].join('\u0000');
    const seen = newest.get(key);
    if (!seen || isNewer(r, seen, newestBy(r))) newest.set(key, r);
  }
  const rows = [...newest.values()];
  // The positions move with the rows, in the same statement, and never backwards (one per partition:
  // an upsert may touch a row once).
  const furthest = new Map<string, DeliveryPosition>();
  for (const p of positions) {
    const key = [p.consumerGroup, p.topic, p.partition].join('\u0000');
    const seen = furthest.get(key);
    if (!seen || BigInt(p.nextOffset) > BigInt(seen.nextOffset)) furthest.set(key, p);
  }
  const moved = [...furthest.values()];
  const position = moved.length > 0;
  const positionParams = position ? [moved.map((p) => p.consumerGroup), moved.map((p) => p.topic), moved.map((p) => p.partition), moved.map((p) => p.nextOffset)] : [];
  const movePosition = (first: number) =>
    `insert into delivery_positions (consumer_group, topic, partition, next_offset)
     select * from unnest($${first}::text[], $${first + 1}::text[], $${first + 2}::int[], $${first + 3}::bigint[])
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
                             source_partition, source_offset, payload, correlation_id, event_time, target_url, source_time, recipient_role, from_hub, state)
     select * , 'pending' from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                                    $7::int[], $8::bigint[], $9::jsonb[], $10::text[], $11::timestamptz[], $12::text[], $13::timestamptz[], $14::text[], $15::boolean[])
     on conflict (kind, emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id, object_id) do update set
       source_partition = excluded.source_partition, source_offset = excluded.source_offset, payload = excluded.payload,
       correlation_id = excluded.correlation_id, event_time = excluded.event_time, source_time = excluded.source_time, from_hub = excluded.from_hub,
       state = 'pending', reason = null, attempts = 0, next_attempt_at = now(), last_error = null, updated_at = now()
     -- Newest wins (reference design, Delivery rules). A kind delivered once (a CDR never changes:
     -- mod_cdrs.asciidoc) appended again is not delivered again, unless an operator replays it. A
     -- session is newer by its last_updated, then by offset (the same key stays in one partition).
     where case
       when excluded.kind in (${DELIVERED_ONCE}) then ${forced ? 'true' : 'false'}
       when excluded.source_time is not null and deliveries.source_time is not null and excluded.source_time <> deliveries.source_time
         then excluded.source_time > deliveries.source_time
       -- A re-send from the read model (offset -1: token-resend) of the version a record holds revives
       -- it when it was parked (dead: the CPO was down too long; unroutable: suspended, no receiver).
       when excluded.source_offset = -1 then deliveries.state in ('dead', 'unroutable')
       else excluded.source_offset ${forced ? '>=' : '>'} deliveries.source_offset end
     returning 1)${position ? `, moved as (${movePosition(16)})` : ''}${quarantine.length > 0 ? `, quarantined as (${quarantineInsertSql(position ? 20 : 16)})` : ''}
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
      col((r) => sourceTime(r, newestBy(r))),
      col((r) => r.recipientRole ?? 'EMSP'),
      col((r) => r.fromHub === true),
      ...positionParams,
      ...(quarantine.length > 0 ? [quarantineParam(quarantine)] : []),
    ],
  );
  return Number(result.rows[0]?.n ?? 0);
}

/** The kinds, in batch order, of the PATCH rows whose delivery rule merges them into `into`. */
const patchedKinds = (rows: readonly DeliveryInput[], into: DeliveryRule['patchMergesInto']): DeliveryKind[] => [
  ...new Set(rows.filter((r) => r.patch === true && deliveryRuleOf(r.kind).patchMergesInto === into).map((r) => deliveryRuleOf(r.kind).kind)),
];

// The sessions the PATCHes of `kind` patch (any eMSP's row; locked until commit, so nothing changes
// them between the read and the write), and the rows with those PATCHes folded in (session-fold.ts).
async function foldOwnersObjects(client: PoolClient, input: readonly DeliveryInput[], kind: DeliveryKind, replayTo: DeliveryInput['emsp'] | undefined): Promise<SessionFold> {
  const patches = input.filter((r) => r.kind === kind && r.patch);
  const sessions = [...new Map(patches.map((r) => [sessionKey(r.cpo, r.objectId), r])).values()];
  // The kind is the module table's (a closed set), so it can be inlined.
  const { rows } = await client.query<{ emsp_country_code: string; emsp_party_id: string; cpo_country_code: string; cpo_party_id: string; object_id: string; source_partition: number; source_offset: string; source_time: Date | null; payload: Json }>(
    `select emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id, object_id, source_partition, source_offset, source_time, payload
         from deliveries
        where kind = '${kind}'
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
  return foldSessionEvents(input, stored, kind, replayTo);
}

// Batches with PATCHes: read the rows they patch (locked until commit), fold the batch in its order,
// token PATCHes first, then Session PATCHes; upsert the result. Batches without one keep the single
// statement. A forced (replay) batch is for one eMSP: the eMSP of its rows.
export async function enqueueFolded(pool: Pool, consumed: readonly DeliveryInput[], forced: boolean, position?: DeliveryPosition, quarantine: readonly QuarantineEntry[] = []): Promise<{ n: number; report: EnqueueReport }> {
  // Token events become one row per receiving CPO (token-fold.ts).
  const input = consumed.some(toEveryRoutedCpo) ? await expandTokenRows(pool, consumed) : consumed;
  const rowPatched = patchedKinds(input, 'recipients-row');
  const ownerPatched = patchedKinds(input, 'owners-object');
  if (rowPatched.length === 0 && ownerPatched.length === 0) return { n: await upsert(pool, input, forced, position ? [position] : [], quarantine), report: { applied: 0, unapplied: [] } };
  const replayTo = forced ? input.find((r) => r.patch === true && ownerPatched.includes(r.kind))?.emsp : undefined;
  return inTransaction(pool, async (client) => {
    let rows = [...input];
    let tokenUnapplied = 0;
    for (const kind of rowPatched) {
      const fold = foldTokenPatches(rows, await loadTokensForUpdate(client, rows, kind), kind);
      rows = fold.rows;
      tokenUnapplied += fold.unapplied;
    }
    const tokenReport = tokenUnapplied > 0 ? { tokenPatchesUnapplied: tokenUnapplied } : {};
    let applied = 0;
    const unapplied: SessionFold['unapplied'] = [];
    for (const kind of ownerPatched) {
      const fold = await foldOwnersObjects(client, rows, kind, replayTo);
      rows = fold.rows;
      applied += fold.applied;
      unapplied.push(...fold.unapplied);
    }
    return { n: await upsert(client, rows, forced, position ? [position] : [], quarantine), report: { applied, unapplied, ...tokenReport } };
  });
}

/** What one consumer batch hands the queue (postgres-delivery-queue.ts, enqueue). */
export interface EnqueueCall {
  readonly rows: readonly DeliveryInput[];
  readonly position?: DeliveryPosition | undefined;
  readonly quarantine?: readonly QuarantineEntry[] | undefined;
}

/**
 * Whether a batch is a plain upsert (no Session or token PATCH to fold, no token to fan out: their
 * delivery rules say so): those can share a statement.
 */
export function isPlainEnqueue(rows: readonly DeliveryInput[]): boolean {
  return rows.every((r) => !toEveryRoutedCpo(r) && !(r.patch === true && deliveryRuleOf(r.kind).patchMergesInto !== undefined));
}

/**
 * Plain batches of several partitions (consumed concurrently) in one statement and one commit, with
 * every partition's position and quarantined records, and one wake-up of the workers: as if applied
 * one after the other (one partition's batches never meet in one statement: each waits for the last).
 */
export async function enqueueJoined(pool: Pool, calls: readonly EnqueueCall[]): Promise<EnqueueReport[]> {
  await upsert(
    pool,
    calls.flatMap((c) => c.rows),
    false,
    calls.flatMap((c) => (c.position ? [c.position] : [])),
    calls.flatMap((c) => c.quarantine ?? []),
  );
  return calls.map(() => ({ applied: 0, unapplied: [] }));
}
