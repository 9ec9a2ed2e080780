import { tokenObjectId } from '@hub/modules';
import type { PartyRef } from '@hub/ocpi';
import type { DeliveryInput, TokenResendSource } from '@hub/core';
import { pgPool } from './pg-pool.ts';
import type { Database } from './pool.ts';
import { ACTIVE_ROUTES } from './postgres-routing-directory.ts';

// A CPO that gets a route to an eMSP later (a new routing rule, a reinstatement) receives the eMSP's
// current tokens: the tokens read model's active generation, per active route
// (ACTIVE_ROUTES). The dispatcher's registry consumer makes them token delivery rows (token-fold.ts
// rules: the newest version per CPO wins, so a CPO that holds a token's version keeps its row).

type Json = Record<string, unknown>;

export function postgresTokenResend(db: Database): TokenResendSource {
  const pool = pgPool(db);
  return {
    async activePairs(of) {
      const [where, params] =
        'party' in of
          ? [of.party.role === 'EMSP' ? 'a.emsp_country_code = $1 and a.emsp_party_id = $2' : 'a.cpo_country_code = $1 and a.cpo_party_id = $2', [of.party.countryCode, of.party.partyId]]
          : ['a.emsp_country_code = $1 and a.emsp_party_id = $2 and a.cpo_country_code = $3 and a.cpo_party_id = $4', [of.emsp.countryCode, of.emsp.partyId, of.cpo.countryCode, of.cpo.partyId]];
      const { rows } = await pool.query<{ emsp_country_code: string; emsp_party_id: string; cpo_country_code: string; cpo_party_id: string }>(
        `select distinct a.emsp_country_code, a.emsp_party_id, a.cpo_country_code, a.cpo_party_id from (${ACTIVE_ROUTES}) a where ${where} order by 1, 2, 3, 4`,
        params.map((p) => p.toUpperCase()),
      );
      return rows.map((r) => ({ emsp: { countryCode: r.emsp_country_code, partyId: r.emsp_party_id }, cpo: { countryCode: r.cpo_country_code, partyId: r.cpo_party_id } }));
    },

    async tokens(emsp, after, limit) {
      const { rows } = await pool.query<{ id: string; document: Json }>(
        `select t.id, t.document from tokens t
          where t.generation = (select active from read_model_generations where model = 'tokens')
            and t.country_code = $1 and t.party_id = $2 and ($3::text is null or t.id > $3)
          order by t.id limit $4`,
        [emsp.countryCode.toUpperCase(), emsp.partyId.toUpperCase(), after ?? null, limit],
      );
      return rows;
    },
  };
}

const TOKENS_PAGE = 1_000;

/**
 * The token delivery rows of a re-send (dispatcher's registry consumer, hubctl tokens resend): per
 * eMSP of the active routes in `scope`, its current tokens for each of those CPOs, handed to `emit` a
 * page at a time. Offset -1: a row a CPO already holds of the same version (same last_updated) is
 * kept as it is (delivery-enqueue.ts, newest wins), so only what the CPO lacks is sent.
 */
export async function tokenResendRows(
  source: TokenResendSource,
  scope: Parameters<TokenResendSource['activePairs']>[0],
  meta: { readonly correlationId: string | undefined; readonly eventTime: string },
  emit: (rows: DeliveryInput[]) => Promise<void>,
): Promise<Array<{ emsp: PartyRef; cpos: PartyRef[]; rows: number }>> {
  const byEmsp = new Map<string, { emsp: PartyRef; cpos: PartyRef[]; rows: number }>();
  for (const p of await source.activePairs(scope)) {
    const k = `${p.emsp.countryCode}/${p.emsp.partyId}`;
    byEmsp.set(k, { emsp: p.emsp, cpos: [...(byEmsp.get(k)?.cpos ?? []), p.cpo], rows: 0 });
  }
  for (const entry of byEmsp.values()) {
    const { emsp, cpos } = entry;
    let after: string | undefined;
    for (;;) {
      const page = await source.tokens(emsp, after, TOKENS_PAGE);
      if (page.length === 0) break;
      after = page[page.length - 1]?.id;
      const rows = page.flatMap((t) =>
        cpos.map((cpo): DeliveryInput => ({
          kind: 'token',
          emsp,
          cpo,
          recipientRole: 'CPO',
          objectId: typeof t.document['uid'] === 'string' && typeof t.document['type'] === 'string' ? tokenObjectId(t.document['uid'], t.document['type']) : t.id.toUpperCase(),
          partition: -1,
          offset: '-1',
          payload: t.document,
          correlationId: meta.correlationId,
          eventTime: meta.eventTime,
        })),
      );
      entry.rows += rows.length;
      await emit(rows);
      if (page.length < TOKENS_PAGE) break;
    }
  }
  return [...byEmsp.values()];
}
