import type { CdrReceipt, CdrReceipts } from '@hub/core';
import { groupCommit } from './group-commit.ts';
import { pgPool, type Pool } from './pg-pool.ts';
import type { Database } from './pool.ts';

// The CDRs as received (migration 004): recorded before their append, so a CDR the hub answered for is
// never left only in Postgres (the prober appends those whose append never completed), and served to
// their owner by GET (mod_cdrs.asciidoc).

type Json = Record<string, unknown>;

/** The received CDR with $1 country code, $2 party id and $3 id (a CiString: any case, migration 012). */
const SAME_CDR = 'country_code = $1 and party_id = $2 and upper(id) = upper($3)';
/** What a CDR post is, against the one already received ($4: the post's content hash). */
const CDR_RECEIPT = "case when content_hash <> $4 then 'conflict' when state = 'appended' then 'duplicate' else 'retry-append' end";

type CdrKey = { countryCode: string; partyId: string; id: string };
type ReceivedCdr = CdrKey & { contentHash: string; document: Json };

/** Receives one CDR: one statement, one round trip: insert, or tell what is already there. */
async function receiveOne(pool: Pool, cdr: ReceivedCdr): Promise<CdrReceipt> {
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
  const again = await pool.query<{ receipt: CdrReceipt }>(`select ${CDR_RECEIPT} as receipt from cdrs where ${SAME_CDR}`, [cdr.countryCode, cdr.partyId, cdr.id, cdr.contentHash]);
  return again.rows[0]?.receipt ?? 'retry-append';
}

/**
 * Receives the CDRs posted while the previous statement ran, in one statement and one commit (group
 * commit, group-commit.ts), deciding each exactly as receiveOne would have one after the other, in
 * the batch's order. Posts of one CDR id in one batch (any case: the id is a CiString) are compared
 * with the first of them, which alone is inserted: the same content is a retry of an append not yet
 * marked ('retry-append', as a concurrent identical post is), another content a conflict.
 * Rows are inserted in key order, so two ingress replicas' batches take their locks in one order and
 * cannot deadlock.
 */
async function receiveBatch(pool: Pool, cdrs: readonly ReceivedCdr[]): Promise<CdrReceipt[]> {
  const params = [cdrs.map((c) => c.countryCode), cdrs.map((c) => c.partyId), cdrs.map((c) => c.id), cdrs.map((c) => c.contentHash), cdrs.map((c) => JSON.stringify(c.document))];
  const { rows } = await pool.query<{ n: string; receipt: CdrReceipt | null }>(
    `with input as (
       select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) with ordinality as t(cc, pid, id, hash, doc, n)),
     leaders as (
       select distinct on (cc, pid, upper(id)) n, cc, pid, id, hash, doc from input order by cc, pid, upper(id), n),
     inserted as (
       insert into cdrs (country_code, party_id, id, content_hash, document, state)
       select cc, pid, id, hash, doc::jsonb, 'pending' from leaders order by cc, pid, upper(id)
       on conflict do nothing
       returning country_code, party_id, upper(id) as uid, content_hash)
     select i.n,
            case when ins.uid is not null and l.n is not null then 'new'
                 when ins.uid is not null then case when ins.content_hash <> i.hash then 'conflict' else 'retry-append' end
                 when c.id is not null then case when c.content_hash <> i.hash then 'conflict' when c.state = 'appended' then 'duplicate' else 'retry-append' end
            end as receipt
       from input i
       left join leaders l on l.n = i.n
       left join inserted ins on ins.country_code = i.cc and ins.party_id = i.pid and ins.uid = upper(i.id)
       left join cdrs c on c.country_code = i.cc and c.party_id = i.pid and upper(c.id) = upper(i.id)
      order by i.n`,
    params,
  );
  const receipts = rows.map((r) => r.receipt);
  const unseen = receipts.flatMap((r, i) => (r === null ? [i] : []));
  if (unseen.length > 0) {
    // Inserted by another transaction after this statement's snapshot (another ingress replica): visible now.
    const again = await pool.query<{ n: string; receipt: CdrReceipt }>(
      `select i.n, case when c.content_hash <> i.hash then 'conflict' when c.state = 'appended' then 'duplicate' else 'retry-append' end as receipt
         from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[]) as i(cc, pid, id, hash, n)
         join cdrs c on c.country_code = i.cc and c.party_id = i.pid and upper(c.id) = upper(i.id)`,
      [...params.slice(0, 4).map((col) => unseen.map((i) => col[i])), unseen],
    );
    for (const r of again.rows) receipts[Number(r.n)] = r.receipt;
  }
  return receipts.map((r) => r ?? 'retry-append');
}

/** Marks the CDRs appended while the previous statement ran in one UPDATE (one commit), in key order. */
async function markBatch(pool: Pool, cdrs: readonly CdrKey[]): Promise<void[]> {
  await pool.query(
    `update cdrs c set state = 'appended', appended_at = now()
       from (select distinct cc, pid, upper(id) as uid from unnest($1::text[], $2::text[], $3::text[]) as k(cc, pid, id) order by 1, 2, 3) k
      where c.country_code = k.cc and c.party_id = k.pid and upper(c.id) = k.uid`,
    [cdrs.map((c) => c.countryCode), cdrs.map((c) => c.partyId), cdrs.map((c) => c.id)],
  );
  return cdrs.map(() => undefined);
}

export function postgresCdrReceipts(db: Database): CdrReceipts {
  const pool = pgPool(db);
  // A CDR costs two commits (received, then marked appended after its append); under load they are
  // shared by every CDR posted meanwhile (group-commit.ts). A failing batch is retried row by row, so
  // one CDR Postgres refuses fails its own request only.
  const receive = groupCommit<ReceivedCdr, CdrReceipt>({ batch: (cdrs) => receiveBatch(pool, cdrs), single: (cdr) => receiveOne(pool, cdr) });
  const mark = groupCommit<CdrKey, void>({
    batch: (cdrs) => markBatch(pool, cdrs),
    single: async (cdr) => {
      await pool.query(`update cdrs set state = 'appended', appended_at = now() where ${SAME_CDR}`, [cdr.countryCode, cdr.partyId, cdr.id]);
    },
  });
  return {
    receiveCdr: (cdr) => receive({ countryCode: cdr.countryCode, partyId: cdr.partyId, id: cdr.id, contentHash: cdr.contentHash, document: cdr.document }),
    markCdrAppended: (cdr) => mark({ countryCode: cdr.countryCode, partyId: cdr.partyId, id: cdr.id }),
    async claimCdrAppend(cdr, settleSeconds) {
      // One statement: of two concurrent retries (two ingress replicas, the relay) one takes it.
      const { rows } = await pool.query<{ created_at: Date }>(
        `update cdrs set append_started_at = now()
          where ${SAME_CDR} and state = 'pending' and append_started_at < now() - ($4 * interval '1 second')
          returning created_at`,
        [cdr.countryCode, cdr.partyId, cdr.id, settleSeconds],
      );
      return rows[0] ? { receivedAt: rows[0].created_at } : undefined;
    },
    async unappendedCdrs(olderThanSeconds, limit) {
      const { rows } = await pool.query<{ country_code: string; party_id: string; id: string; content_hash: string; document: Json; created_at: Date }>(
        `update cdrs c set append_started_at = now()
           from (select country_code, party_id, id from cdrs
                  where state = 'pending' and append_started_at < now() - ($1 * interval '1 second')
                  order by created_at limit $2 for update skip locked) due
          where c.country_code = due.country_code and c.party_id = due.party_id and c.id = due.id
          returning c.country_code, c.party_id, c.id, c.content_hash, c.document, c.created_at`,
        [olderThanSeconds, limit],
      );
      return rows
        .sort((a, b) => a.created_at.getTime() - b.created_at.getTime())
        .map((r) => ({ countryCode: r.country_code, partyId: r.party_id, id: r.id, contentHash: r.content_hash, document: r.document, receivedAt: r.created_at }));
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
  };
}
