import { isTokenFanOut, tokenRowKey, type DeliveryInput, type DeliveryKind, type StoredToken } from '@hub/core';
import { deliveryRuleOf, type DeliveryRule } from '@hub/modules';
import { ACTIVE_ROUTES } from './postgres-routing-directory.ts';
import type { Pool, PoolClient } from './pg-pool.ts';

// The SQL side of token delivery rows (the fold itself is @hub/core's, token-fold.ts): which CPOs a
// fanned-out token event goes to, and the token rows a PATCH merges into. Which kinds are such rows is
// their delivery rules' (@hub/modules: toEveryRoutedCpo, patchMergesInto 'recipients-row').

type Json = Record<string, unknown>;
type Party = { countryCode: string; partyId: string };

/** Whether a row's kind goes to every routed CPO when its event names none (its delivery rule). */
export const toEveryRoutedCpo = (r: DeliveryInput): boolean => deliveryRuleOf(r.kind).toEveryRoutedCpo === true;

/** The CPOs routed to the eMSPs of a kind's fanned-out rows that implement its receiver module, by eMSP. */
async function routedCpos(db: Pool | PoolClient, input: readonly DeliveryInput[], rule: DeliveryRule): Promise<Map<string, Party[]>> {
  const emsps = [...new Map(input.filter((r) => r.kind === rule.kind && isTokenFanOut(r)).map((r) => [`${r.emsp.countryCode}/${r.emsp.partyId}`, r.emsp])).values()];
  const routed = new Map<string, Party[]>();
  if (emsps.length === 0) return routed;
  // The receiver module is the module table's (a closed set), so it can be inlined.
  const { rows } = await db.query<{ emsp_country_code: string; emsp_party_id: string; cpo_country_code: string; cpo_party_id: string }>(
    `select distinct a.emsp_country_code, a.emsp_party_id, a.cpo_country_code, a.cpo_party_id from (${ACTIVE_ROUTES}) a
        where (a.emsp_country_code, a.emsp_party_id) in (select * from unnest($1::text[], $2::text[]))
          -- transport_and_format.asciidoc, Broadcast Push: only to clients "implementing the corresponding
          -- module"; a CPO without a tokens receiver would only collect unroutable rows.
          and (exists (select 1 from partner_endpoints e where e.platform_id = a.cpo_platform_id and e.identifier = '${rule.receiverModule}' and e.role = 'RECEIVER')
               or exists (select 1 from endpoint_overrides o where o.country_code = a.cpo_country_code and o.party_id = a.cpo_party_id and o.role = 'CPO' and o.module = '${rule.receiverModule}'))
        order by 3, 4`,
    [emsps.map((e) => e.countryCode), emsps.map((e) => e.partyId)],
  );
  for (const r of rows) {
    const key = `${r.emsp_country_code}/${r.emsp_party_id}`;
    routed.set(key, [...(routed.get(key) ?? []), { countryCode: r.cpo_country_code, partyId: r.cpo_party_id }]);
  }
  return routed;
}

/**
 * The rows of kinds that go to every routed CPO (token rows), one per receiving CPO (ids upper-cased: a
 * uid is a CiString, types.asciidoc); other rows as they are, in their place.
 */
export async function expandTokenRows(db: Pool | PoolClient, input: readonly DeliveryInput[]): Promise<DeliveryInput[]> {
  const routed = new Map<DeliveryKind, Map<string, Party[]>>();
  for (const r of input) {
    const rule = deliveryRuleOf(r.kind);
    if (rule.toEveryRoutedCpo === true && !routed.has(rule.kind)) routed.set(rule.kind, await routedCpos(db, input, rule));
  }
  return input.flatMap((r) => {
    const cposOf = routed.get(r.kind);
    if (cposOf === undefined) return [r];
    const cpos = isTokenFanOut(r) ? (cposOf.get(`${r.emsp.countryCode}/${r.emsp.partyId}`) ?? []) : [r.cpo];
    return cpos.map((cpo) => ({ ...r, cpo, objectId: r.objectId.toUpperCase(), recipientRole: 'CPO' as const }));
  });
}

/**
 * The rows of `kind` (one whose PATCH merges into the recipient's row) that PATCHes of `rows` merge
 * into, locked until the caller's transaction ends.
 */
export async function loadTokensForUpdate(client: PoolClient, rows: readonly DeliveryInput[], kind: DeliveryKind): Promise<StoredToken[]> {
  const patched = [...new Map(rows.filter((r) => r.kind === kind && r.patch).map((r) => [tokenRowKey(r), r])).values()];
  if (patched.length === 0) return [];
  // The kind is the module table's (a closed set), so it can be inlined.
  const { rows: found } = await client.query<{ emsp_country_code: string; emsp_party_id: string; cpo_country_code: string; cpo_party_id: string; object_id: string; source_offset: string; source_time: Date | null; payload: Json }>(
    `select emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id, object_id, source_offset, source_time, payload
       from deliveries
      where kind = '${kind}' and (emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id, object_id)
            in (select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]))
      order by id
      for update`,
    [patched.map((r) => r.emsp.countryCode), patched.map((r) => r.emsp.partyId), patched.map((r) => r.cpo.countryCode), patched.map((r) => r.cpo.partyId), patched.map((r) => r.objectId.toUpperCase())],
  );
  return found.map((r) => ({
    emsp: { countryCode: r.emsp_country_code, partyId: r.emsp_party_id },
    cpo: { countryCode: r.cpo_country_code, partyId: r.cpo_party_id },
    objectId: r.object_id,
    offset: r.source_offset,
    sourceTime: r.source_time ? r.source_time.toISOString() : null,
    payload: r.payload,
  }));
}
