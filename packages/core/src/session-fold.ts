import { mergeSessionPatch } from './session-patch.ts';
import type { DeliveryInput, DeliveryKind } from './delivery-records.ts';
import { utcTime } from './utc-time.ts';

// Session PATCH events turned into full sessions for delivery (mod_sessions.asciidoc, PATCH Method;
// README, Delivery rules). A PATCH is merged into the newest full session the hub holds for that
// CPO and session id (the stored delivery rows, or a PUT/PATCH earlier in the same batch: a batch is
// folded in its order), and the result is delivered like a PUT of it. Newest wins as for PUT: a PATCH
// whose last_updated is older than the session it would merge into (ties by offset) is superseded and
// not applied. A PATCH with no session to merge into is not applied either; the caller reports both.

type Json = Record<string, unknown>;
type Party = { countryCode: string; partyId: string };

/** A session's newest stored delivery row (any eMSP). */
export interface StoredSession {
  readonly emsp: Party;
  readonly cpo: Party;
  readonly objectId: string;
  readonly partition: number;
  readonly offset: string;
  /** The row's source_time (ISO, UTC), null for rows from before migration 010. */
  readonly sourceTime: string | null;
  readonly payload: Json;
}

export interface UnappliedPatch {
  readonly input: DeliveryInput;
  /** superseded: older than the session it would merge into; no-session: nothing to merge into. */
  readonly reason: 'superseded' | 'no-session';
}

export interface SessionFold {
  /** The inputs in order, each PATCH that applies replaced by the full merged session. */
  readonly rows: DeliveryInput[];
  readonly applied: number;
  readonly unapplied: UnappliedPatch[];
}

interface Version {
  readonly emsp: Party;
  readonly objectId: string;
  readonly partition: number;
  readonly offset: string;
  readonly time: string | null;
  readonly payload: Json;
}

/** One session: a CPO's session id, a CiString (types.asciidoc) like every OCPI id. */
export const sessionKey = (cpo: Party, id: string): string => `${cpo.countryCode.toUpperCase()}\u0000${cpo.partyId.toUpperCase()}\u0000${id.toUpperCase()}`;

/** The same order as the delivery rows' newest-wins: last_updated, then offset. */
function newer(a: Pick<Version, 'time' | 'offset'>, b: Pick<Version, 'time' | 'offset'>): boolean {
  if (a.time !== null && b.time !== null && a.time !== b.time) return a.time > b.time;
  return BigInt(a.offset) > BigInt(b.offset);
}

/** The eMSP a full session names (cdr_token), as the dispatcher reads it for a PUT. */
function emspOf(payload: Json, fallback: Party): Party {
  const token = payload['cdr_token'] as Json | undefined;
  const cc = token?.['country_code'];
  const pid = token?.['party_id'];
  return typeof cc === 'string' && typeof pid === 'string' ? { countryCode: cc.toUpperCase(), partyId: pid.toUpperCase() } : fallback;
}

/**
 * `kind`: the rows folded, those whose delivery rule merges a PATCH into the owner's object
 * (@hub/modules, patchMergesInto: sessions); rows of other kinds pass as they are, in their place.
 * `replayTo`: an operator replay to this eMSP (hubctl replay, enqueueForced). Only its sessions are
 * touched, and a PATCH whose event is the version a row holds already makes that row pending again
 * as it is (merging it again would add its charging periods twice), as a replayed PUT does.
 */
export function foldSessionEvents(inputs: readonly DeliveryInput[], stored: readonly StoredSession[], kind: DeliveryKind, replayTo?: Party): SessionFold {
  const latest = new Map<string, Version>();
  const keep = (key: string, v: Version) => {
    const seen = latest.get(key);
    if (!seen || newer(v, seen)) latest.set(key, v);
  };
  for (const s of stored) keep(sessionKey(s.cpo, s.objectId), { emsp: s.emsp, objectId: s.objectId, partition: s.partition, offset: s.offset, time: s.sourceTime, payload: s.payload });
  const rows: DeliveryInput[] = [];
  const unapplied: UnappliedPatch[] = [];
  let applied = 0;
  for (const input of inputs) {
    const time = input.kind === kind ? utcTime(input.payload['last_updated'], 'utc') : null;
    if (input.kind !== kind || !input.patch) {
      rows.push(input);
      if (input.kind === kind) keep(sessionKey(input.cpo, input.objectId), { emsp: input.emsp, objectId: input.objectId, partition: input.partition, offset: input.offset, time, payload: input.payload });
      continue;
    }
    const key = sessionKey(input.cpo, input.objectId);
    const base = latest.get(key);
    if (!base) {
      unapplied.push({ input, reason: 'no-session' });
      continue;
    }
    const { patch: _patch, ...rest } = input;
    if (replayTo && (base.emsp.countryCode !== replayTo.countryCode || base.emsp.partyId !== replayTo.partyId)) continue;
    if (replayTo && base.partition === input.partition && base.offset === input.offset) {
      rows.push({ ...rest, emsp: base.emsp, objectId: base.objectId, payload: base.payload });
      applied++;
      continue;
    }
    if (!newer({ time, offset: input.offset }, base)) {
      unapplied.push({ input, reason: 'superseded' });
      continue;
    }
    const payload = mergeSessionPatch(base.payload, input.payload);
    // The row of the session as first stored (its id's case); its eMSP unless the PATCH named
    // another in cdr_token (then, as for a PUT, the session goes to that eMSP).
    const emsp = emspOf(payload, base.emsp);
    rows.push({ ...rest, emsp, objectId: base.objectId, payload });
    latest.set(key, { emsp, objectId: base.objectId, partition: input.partition, offset: input.offset, time, payload });
    applied++;
  }
  return { rows, applied, unapplied };
}
