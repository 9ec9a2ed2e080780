import { mergePatch } from './merge-patch.ts';
import type { DeliveryInput, DeliveryKind } from './delivery-records.ts';
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

/** A token row's key: its pair and token (the id upper-cased: a uid is a CiString, types.asciidoc). */
export const tokenRowKey = (r: Pick<DeliveryInput, 'emsp' | 'cpo' | 'objectId'>) => [r.emsp.countryCode, r.emsp.partyId, r.cpo.countryCode, r.cpo.partyId, r.objectId.toUpperCase()].join('\u0000');
/** Whether a token row goes to every routed CPO (expanded into one row per CPO by the store). */
export const isTokenFanOut = (r: DeliveryInput) => r.cpo.countryCode === EVERY_ROUTED_CPO.countryCode && r.cpo.partyId === EVERY_ROUTED_CPO.partyId;

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

/**
 * Folds the PATCHes of `kind` in rows (in order) into the full token each CPO holds; others pass as they
 * are. `kind`: the rows whose delivery rule merges a PATCH into the recipient's row (@hub/modules,
 * patchMergesInto: tokens).
 */
export function foldTokenPatches(rows: readonly DeliveryInput[], stored: readonly StoredToken[], kind: DeliveryKind): { rows: DeliveryInput[]; unapplied: number } {
  const latest = new Map<string, { time: string | null; offset: string; payload: Json }>();
  for (const s of stored) latest.set(tokenRowKey(s), { time: s.sourceTime, offset: s.offset, payload: s.payload });
  const out: DeliveryInput[] = [];
  let unapplied = 0;
  for (const r of rows) {
    if (r.kind !== kind) {
      out.push(r);
      continue;
    }
    const key = tokenRowKey(r);
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
