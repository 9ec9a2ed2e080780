import type { Pool } from './pool.ts';

// The CDRs as received (migration 004): recorded before their append, so a CDR the hub answered for is
// never left only in Postgres (the prober appends those whose append never completed), and served to
// their owner by GET (mod_cdrs.asciidoc).

type Json = Record<string, unknown>;

export type CdrReceipt = 'new' | 'retry-append' | 'duplicate' | 'conflict';

export interface CdrReceipts {
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
}

/** The received CDR with $1 country code, $2 party id and $3 id (a CiString: any case, migration 012). */
const SAME_CDR = 'country_code = $1 and party_id = $2 and upper(id) = upper($3)';
/** What a CDR post is, against the one already received ($4: the post's content hash). */
const CDR_RECEIPT = "case when content_hash <> $4 then 'conflict' when state = 'appended' then 'duplicate' else 'retry-append' end";

export function postgresCdrReceipts(pool: Pool): CdrReceipts {
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
  };
}
