import type { DriverToken } from '@hub/core';
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, randomUUID } from 'node:crypto';
import { personalFieldsOf, type PersonalObjectKind } from '@hub/modules';

// Personal data of a driver's token, sealed per token so that destroying one data key erases that
// driver from immutable topics (docs/decisions/0013-erasure-by-destroying-data-keys.md). Each token
// (eMSP country code, party id, uid, type) has its own 256-bit data key; the key table holds it
// wrapped (AES-256-GCM) under a key-encryption key derived from HUB_SECRET_KEY, and finds it by a
// keyed hash of the token (so the table never holds a plain uid). Events carry the sealed fields and
// the data key's random id only; a reader whose key is gone shows ERASED_PLACEHOLDER.

/** What an erased personal field reads as, everywhere (API, deliveries, replays, rebuilds). */
export const ERASED_PLACEHOLDER = 'ERASED';


// The personal fields of each object are declared by its module (@hub/modules, personalData in its
// module.ts; decision 0016): 'token', 'session', 'cdr' and 'command' name them here.
export type { PersonalObjectKind } from '@hub/modules';

/**
 * The sealed personal fields of one event, as its hub-sealed-driver-data header carries them:
 * "<key_id>.<base64 of version byte, 12-byte IV, 16-byte tag, ciphertext of the JSON of the fields>".
 * The key id is the data key's random id: also the token's pseudonym, unlinkable once erased.
 */
export type SealedDriverData = string;

/** The data key id a sealed text names, or undefined when the text is not one. */
export function sealedKeyId(sealed: SealedDriverData | undefined): string | undefined {
  if (!sealed) return undefined;
  const dot = sealed.indexOf('.');
  return dot > 0 ? sealed.slice(0, dot) : undefined;
}

/** A token's data key in the key table, wrapped under the key-encryption key. */
export interface WrappedDataKey {
  readonly keyId: string;
  readonly wrapped: Buffer;
}

const VERSION = 1;

function gcmSeal(key: Buffer, plain: Buffer, aad: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
}

function gcmOpen(key: Buffer, sealed: Buffer, aad: string): Buffer {
  if (sealed.length < 29 || sealed[0] !== VERSION) throw new Error('unknown sealed driver data version');
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(1, 13), { authTagLength: 16 });
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(sealed.subarray(13, 29));
  return Buffer.concat([decipher.update(sealed.subarray(29)), decipher.final()]);
}

/** The key-encryption key and the token-reference key, both derived from HUB_SECRET_KEY (HKDF-SHA256). */
export interface DriverDataKeyring {
  /** The keyed hash the key table finds a token's data key by (uid and contract_id are CiStrings: upper-cased). */
  tokenRef(token: DriverToken): Buffer;
  /** A new data key for a token: the plain key (kept in memory only) and its wrapped form for the table. */
  newDataKey(): { readonly plain: Buffer; readonly wrapped: WrappedDataKey };
  unwrap(key: WrappedDataKey): Buffer;
}

export function driverDataKeyring(secretKey: Buffer): DriverDataKeyring {
  if (secretKey.length !== 32) throw new Error('driver data keyring needs the 32-byte HUB_SECRET_KEY');
  const derive = (info: string): Buffer => Buffer.from(hkdfSync('sha256', secretKey, Buffer.alloc(0), info, 32));
  const kek = derive('ocpi-hub driver data key-encryption key v1');
  const refKey = derive('ocpi-hub driver token reference v1');
  return {
    tokenRef(token) {
      const name = [token.countryCode, token.partyId, token.uid, token.type].map((s) => s.toUpperCase()).join('\u0000');
      return createHmac('sha256', refKey).update(name, 'utf8').digest();
    },
    newDataKey() {
      const plain = randomBytes(32);
      const keyId = randomUUID();
      return { plain, wrapped: { keyId, wrapped: gcmSeal(kek, plain, keyId) } };
    },
    unwrap(key) {
      return gcmOpen(kek, key.wrapped, key.keyId);
    },
  };
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function getPath(obj: JsonObject, path: ReadonlyArray<string>): { parent: JsonObject; name: string } | undefined {
  let cur: JsonObject = obj;
  for (const step of path.slice(0, -1)) {
    const next = cur[step];
    if (!isObject(next)) return undefined;
    cur = next;
  }
  const name = path[path.length - 1]!;
  return name in cur ? { parent: cur, name } : undefined;
}

/**
 * A copy of the object in which the objects along the personal fields' paths are copies too, and
 * everything else is shared with the original: only those fields are written, and a deep clone of a
 * whole CDR per event would cost more than the sealing itself.
 */
function copyAlong(object: object, kind: PersonalObjectKind): JsonObject {
  const root: JsonObject = { ...(object as JsonObject) };
  const copied = new Set<object>([root]);
  for (const path of personalFieldsOf(kind)) {
    let cur = root;
    for (const step of path.slice(0, -1)) {
      const next = cur[step];
      if (!isObject(next)) break;
      if (!copied.has(next)) {
        const copy = { ...next };
        copied.add(copy);
        cur[step] = copy;
        cur = copy;
      } else cur = next;
    }
  }
  return root;
}

/**
 * The object as it goes into an event: every personal string field present is replaced by the data
 * key's id (a pseudonym that fits the OCPI field, a 36-character UUID), and the plain values travel
 * sealed beside it (the event's hub-sealed-driver-data header). Fields absent or null stay as they
 * are; with nothing to seal, `sealed` is undefined and the object the one given.
 */
export function sealPersonalFields<T extends object>(kind: PersonalObjectKind, object: T, dataKey: Buffer, keyId: string, extra: Readonly<Record<string, string>> = {}): { readonly object: T; readonly sealed?: SealedDriverData } {
  const copy = copyAlong(object, kind);
  // Extra entries ('@'-prefixed: no OCPI field is) seal what is not a field, e.g. a token event's subject.
  const plain: Record<string, string> = { ...extra };
  for (const path of personalFieldsOf(kind)) {
    const at = getPath(copy, path);
    if (!at || typeof at.parent[at.name] !== 'string') continue;
    plain[path.join('.')] = at.parent[at.name] as string;
    at.parent[at.name] = keyId;
  }
  if (Object.keys(plain).length === 0) return { object };
  const sealed = `${keyId}.${gcmSeal(dataKey, Buffer.from(JSON.stringify(plain), 'utf8'), keyId).toString('base64')}`;
  return { object: copy as unknown as T, sealed };
}

/**
 * The object as readers show it: with the data key, the plain values back in place; without it
 * (erased, or the key table lost: docs/how-to/erase-driver-data.md), ERASED_PLACEHOLDER in every
 * personal field the event sealed. Every other field is as the event holds it. Without a sealed text
 * (an event written before sealing) the object is returned as is.
 */
export function openPersonalFields<T extends object>(kind: PersonalObjectKind, object: T, sealed: SealedDriverData | undefined, dataKey: Buffer | undefined): T {
  const keyId = sealedKeyId(sealed);
  if (keyId === undefined || sealed === undefined) return object;
  const copy = copyAlong(object, kind);
  let plain: Record<string, string> | undefined;
  if (dataKey) plain = openSealedEntries(sealed, dataKey);
  for (const path of personalFieldsOf(kind)) {
    const at = getPath(copy, path);
    if (!at || at.parent[at.name] !== keyId) continue;
    at.parent[at.name] = plain?.[path.join('.')] ?? ERASED_PLACEHOLDER;
  }
  return copy as unknown as T;
}

/** Every entry of a sealed text (personal fields by path, and the '@' extras). */
export function openSealedEntries(sealed: SealedDriverData, dataKey: Buffer): Record<string, string> {
  const keyId = sealedKeyId(sealed);
  if (keyId === undefined) throw new Error('sealed driver data without a key id');
  return JSON.parse(gcmOpen(dataKey, Buffer.from(sealed.slice(keyId.length + 1), 'base64'), keyId).toString('utf8')) as Record<string, string>;
}

/**
 * A plain copy (a read model row, a delivery payload, a CDR as received) with every personal field
 * present replaced by ERASED_PLACEHOLDER: what `hubctl erase token` leaves in Postgres.
 */
export function erasePersonalFields<T extends object>(kind: PersonalObjectKind, object: T): T {
  const copy = copyAlong(object, kind);
  for (const path of personalFieldsOf(kind)) {
    const at = getPath(copy, path);
    if (at && typeof at.parent[at.name] === 'string') at.parent[at.name] = ERASED_PLACEHOLDER;
  }
  return copy as unknown as T;
}
