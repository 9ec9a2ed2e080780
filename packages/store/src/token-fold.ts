import { mergePatch } from '@hub/modules';
import type { DeliveryInput } from './delivery-records.ts';
import { ACTIVE_ROUTES } from './postgres-routing-directory.ts';
import type { Pool, PoolClient } from './pool.ts';
import { utcTime } from './utc-time.ts';

// Token events into token delivery rows (mod_tokens.asciidoc, Receiver interface). One event
// of an eMSP's token becomes one row per CPO: the CPO its OCPI-to headers named, or every CPO with an
// active routing rule to the eMSP (fan-out; a Broadcast Push, transport_and_format.asciidoc, is the
// same). Each CPO's row holds the newest full token: a PATCH is merged into the token that row holds
// (or a PUT earlier in the batch), newest by last_updated then offset, and delivered with PUT. A PATCH
// for a CPO that holds no version of the token is not applied: that CPO gets the whole token from the
// read model when it is routed (dispatcher, registry consumer).

type Json = Record<string, unknown>;
type Party = { countryCode: string; partyId: string };

/** The CPO placeholder of a token event that goes to every routed CPO. */
export const EVERY_ROUTED_CPO: Party = Object.freeze({ countryCode: '*', partyId: '*' });

const keyOf = (r: Pick<DeliveryInput, 'emsp' | 'cpo' | 'objectId'>) => [r.emsp.countryCode, r.emsp.partyId, r.cpo.countryCode, r.cpo.partyId, r.objectId.toUpperCase()].join('\u0000');
const isFanOut = (r: DeliveryInput) => r.cpo.countryCode === EVERY_ROUTED_CPO.countryCode && r.cpo.partyId === EVERY_ROUTED_CPO.partyId;

/** The token rows, one per receiving CPO (ids upper-cased: a uid is a CiString, types.asciidoc). */
export async function expandTokenRows(db: Pool | PoolClient, input: readonly DeliveryInput[]): Promise<DeliveryInput[]> {
  const emsps = [...new Map(input.filter((r) => r.kind === 'token' && isFanOut(r)).map((r) => [`${r.emsp.countryCode}/${r.emsp.partyId}`, r.emsp])).values()];
  const routed = new Map<string, Party[]>();
  if (emsps.length > 0) {
    const { rows } = await db.query<{ emsp_country_code: string; emsp_party_id: string; cpo_country_code: string; cpo_party_id: string }>(
      `select distinct a.emsp_country_code, a.emsp_party_id, a.cpo_country_code, a.cpo_party_id from (${ACTIVE_ROUTES}) a
        where (a.emsp_country_code, a.emsp_party_id) in (select * from unnest($1::text[], $2::text[]))
          -- transport_and_format.asciidoc, Broadcast Push: only to clients "implementing the corresponding
          -- module"; a CPO without a tokens receiver would only collect unroutable rows.
          and (exists (select 1 from partner_endpoints e where e.platform_id = a.cpo_platform_id and e.identifier = 'tokens' and e.role = 'RECEIVER')
               or exists (select 1 from endpoint_overrides o where o.country_code = a.cpo_country_code and o.party_id = a.cpo_party_id and o.role = 'CPO' and o.module = 'tokens'))
        order by 3, 4`,
      [emsps.map((e) => e.countryCode), emsps.map((e) => e.partyId)],
    );
    for (const r of rows) {
      const key = `${r.emsp_country_code}/${r.emsp_party_id}`;
      routed.set(key, [...(routed.get(key) ?? []), { countryCode: r.cpo_country_code, partyId: r.cpo_party_id }]);
    }
  }
  return input.flatMap((r) => {
    if (r.kind !== 'token') return [r];
    const cpos = isFanOut(r) ? (routed.get(`${r.emsp.countryCode}/${r.emsp.partyId}`) ?? []) : [r.cpo];
    return cpos.map((cpo) => ({ ...r, cpo, objectId: r.objectId.toUpperCase(), recipientRole: 'CPO' as const }));
  });
}

export interface StoredToken {
  readonly emsp: Party;
  readonly cpo: Party;
  readonly objectId: string;
  readonly offset: string;
  readonly sourceTime: string | null;
  readonly payload: Json;
}

const newer = (a: { time: string | null; offset: string }, b: { time: string | null; offset: string }) =>
  a.time !== null && b.time !== null && a.time !== b.time ? a.time > b.time : BigInt(a.offset) > BigInt(b.offset);

/** Folds the token PATCHes of rows (in order) into the full token each CPO holds; others pass as they are. */
export function foldTokenPatches(rows: readonly DeliveryInput[], stored: readonly StoredToken[]): { rows: DeliveryInput[]; unapplied: number } {
  const latest = new Map<string, { time: string | null; offset: string; payload: Json }>();
  for (const s of stored) latest.set(keyOf(s), { time: s.sourceTime, offset: s.offset, payload: s.payload });
  const out: DeliveryInput[] = [];
  let unapplied = 0;
  for (const r of rows) {
    if (r.kind !== 'token') {
      out.push(r);
      continue;
    }
    const key = keyOf(r);
    const time = utcTime(r.payload['last_updated'], 'utc');
    const base = latest.get(key);
    if (!r.patch) {
      out.push(r);
      if (!base || newer({ time, offset: r.offset }, base)) latest.set(key, { time, offset: r.offset, payload: r.payload });
      continue;
    }
    if (!base || !newer({ time, offset: r.offset }, base)) {
      unapplied++;
      continue;
    }
    const { patch: _patch, ...full } = r;
    const payload = mergePatch(base.payload, r.payload);
    out.push({ ...full, payload });
    latest.set(key, { time, offset: r.offset, payload });
  }
  return { rows: out, unapplied };
}

/** The token rows PATCHes of `rows` merge into, locked until the caller's transaction ends. */
export async function loadTokensForUpdate(client: PoolClient, rows: readonly DeliveryInput[]): Promise<StoredToken[]> {
  const patched = [...new Map(rows.filter((r) => r.kind === 'token' && r.patch).map((r) => [keyOf(r), r])).values()];
  if (patched.length === 0) return [];
  const { rows: found } = await client.query<{ emsp_country_code: string; emsp_party_id: string; cpo_country_code: string; cpo_party_id: string; object_id: string; source_offset: string; source_time: Date | null; payload: Json }>(
    `select emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id, object_id, source_offset, source_time, payload
       from deliveries
      where kind = 'token' and (emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id, object_id)
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
