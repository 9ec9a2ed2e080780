// Request generators for the fuzz tier: a seeded PRNG picks an endpoint of the
// partner API and a kind of damage. Hostile cases are refused by construction (the hub must not append
// anything for them); mutations of valid bodies may be accepted, and are judged by their answer.
import { gzipSync, deflateSync } from 'node:zlib';

type Json = Record<string, unknown>;

/** mulberry32: small, seeded, good enough to spread cases. */
export function prng(seed: number) {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)] as T;
  return { next, int, pick };
}
export type Rng = ReturnType<typeof prng>;

export type Caller = 'cpo' | 'emsp' | 'credentials' | 'none';

export interface Endpoint {
  readonly name: string;
  readonly method: string;
  /** Path segments below the host; each may be replaced by an odd one. */
  readonly segments: readonly string[];
  readonly caller: Caller;
  readonly body?: () => Json;
  readonly query?: boolean;
}

export interface FuzzCase {
  readonly kind: string;
  readonly endpoint: string;
  readonly method: string;
  readonly path: string;
  readonly caller: Caller;
  /** Extra or replacing headers; an array value sends the header several times. */
  readonly headers: Record<string, string | string[]>;
  readonly body?: Buffer | string;
  /** Hostile by construction: must be refused. Mutations of valid input may be accepted. */
  readonly hostile: boolean;
  /** What exactly was odd (e.g. which string), for the summary of accepted input. */
  readonly detail?: string;
  /** Authorization as given here instead of the caller's token (undefined: none at all). */
  readonly authorization?: string | string[] | null;
}

const ODD_STRINGS = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\u202eRTL\u202c',
  '\u200f\u061f',
  '\ufeff',
  'x'.repeat(10_000),
  '🔌'.repeat(300),
  '',
  ' ',
  "' or 1=1 --",
  '<script>alert(1)</script>',
  '%00%zz',
  '../../etc/passwd',
  'e\u0301',
];
const ODD_VALUES: unknown[] = [null, true, 0, -1, 1.5, 1e308, -0, [], {}, [null], { '': '' }, '2026-13-45T25:61:61Z', 'not a date', ...ODD_STRINGS];
const ODD_SEGMENTS = ['%', '%zz', '%E0%A4%A', '%00', '..', '%2e%2e', '%2F', '%ED%A0%80', '%C0%AF', '%F0%9F%98%80', '%20', 'a'.repeat(10_000), '*', ';', '%25', '%uD800'];
const BAD_QUERIES = [
  'offset=-1',
  'limit=abc',
  'limit=-5',
  'limit=1e3',
  'offset=1&offset=2',
  'date_from=garbage',
  'date_to=2026-02-30T00:00:00Z',
  'date_from=2026-01-01T00:00:00Z&date_from=2026-01-02T00:00:00Z',
  `offset=${'9'.repeat(400)}`,
  'limit=%zz',
  '__proto__=x&constructor=y',
  'offset[]=1',
  'date_from=%00',
];
const MALFORMED_BODIES = ['{', '{"a":', '[1,', '{"a" 1}', 'nul', '\u0000', '{"a":"\\ud800', '}{', 'true false', '{"a":1}}'];

/** The deepest JSON the 1 MiB body limit lets through is far deeper than 10k; 10k is what the issue names. */
const deepArray = (n: number) => '['.repeat(n) + ']'.repeat(n);
const deepObject = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);

/** Sets a random field (top level or one level down) of a copy of body to value. */
function mutate(rng: Rng, body: Json, value: unknown): Json {
  const copy = structuredClone(body);
  const keys = Object.keys(copy);
  if (keys.length === 0) return { [rng.pick(['id', 'x'])]: value };
  const key = rng.pick(keys);
  const inner = copy[key];
  if (rng.next() < 0.4 && inner && typeof inner === 'object' && !Array.isArray(inner) && Object.keys(inner).length > 0) {
    (inner as Json)[rng.pick(Object.keys(inner))] = value;
  } else if (rng.next() < 0.15) {
    delete copy[key];
  } else {
    copy[key] = value;
  }
  return copy;
}

const json = { 'content-type': 'application/json' };

export function generate(rng: Rng, endpoints: readonly Endpoint[], count: number): FuzzCase[] {
  const cases: FuzzCase[] = [];
  for (let i = 0; i < count; i++) {
    const e = rng.pick(endpoints);
    const path = () => `/${e.segments.join('/')}`;
    const base = { endpoint: e.name, method: e.method, caller: e.caller, headers: {} as Record<string, string | string[]> };
    const valid = e.body?.();
    switch (rng.int(11)) {
      case 0:
        cases.push({ ...base, kind: 'malformed JSON', path: path(), headers: json, body: rng.pick(MALFORMED_BODIES), hostile: true, method: e.body ? e.method : 'PUT' });
        break;
      case 1:
        cases.push({ ...base, kind: 'deep JSON (10k levels)', path: path(), headers: json, body: rng.next() < 0.5 ? deepArray(10_000) : deepObject(10_000), hostile: true, method: e.body ? e.method : 'PUT' });
        break;
      case 2:
        if (!valid) continue;
        cases.push({ ...base, kind: 'wrong type', path: path(), headers: json, body: JSON.stringify(mutate(rng, valid, rng.pick(ODD_VALUES.filter((v) => typeof v !== 'string')))), hostile: false });
        break;
      case 3: {
        if (!valid) continue;
        const odd = rng.pick(ODD_STRINGS);
        const detail = odd.length > 40 ? `${odd.length} characters` : JSON.stringify(odd);
        cases.push({ ...base, kind: 'odd string', detail, path: path(), headers: json, body: JSON.stringify(mutate(rng, valid, odd)), hostile: false });
        break;
      }
      case 4: {
        if (!valid) continue;
        // A deep value inside an otherwise valid body, and duplicated keys.
        const text = JSON.stringify(valid);
        const body = rng.next() < 0.5 ? `${text.slice(0, -1)},"x":${deepArray(10_000)}}` : `{"id":"dup",${text.slice(1)}`;
        cases.push({ ...base, kind: 'deep field or duplicate key', path: path(), headers: json, body, hostile: false });
        break;
      }
      case 5: {
        const segments = [...e.segments];
        const at = 1 + rng.int(segments.length - 1);
        segments[at] = rng.pick(ODD_SEGMENTS);
        const body = valid ? JSON.stringify(valid) : undefined;
        cases.push({ ...base, kind: 'odd path segment', path: `/${segments.join('/')}`, headers: body ? json : {}, ...(body ? { body } : {}), hostile: false });
        break;
      }
      case 6: {
        const variants: Array<string | string[] | null> = [
          null,
          'Token',
          'Token ',
          'Bearer abc',
          'Token ====',
          `Token ${'A'.repeat(9000)}`,
          'Token \u00e9\u00e9',
          ['Token a', 'Token b'],
          'token  x y',
        ];
        const body = valid ? JSON.stringify(valid) : undefined;
        cases.push({ ...base, kind: 'bad Authorization', path: path(), headers: body ? json : {}, ...(body ? { body } : {}), authorization: rng.pick(variants), hostile: e.caller !== 'none' });
        break;
      }
      case 7: {
        const headers: Record<string, string | string[]> = {};
        for (const h of ['ocpi-to-country-code', 'ocpi-to-party-id', 'ocpi-from-country-code', 'ocpi-from-party-id', 'x-request-id', 'x-correlation-id']) {
          if (rng.next() < 0.5) headers[h] = rng.pick([['NL', 'DE'], 'x'.repeat(5000), '', 'ZZ', '\u00e9', '1', ['a', 'b', 'c']] as Array<string | string[]>);
        }
        const body = valid ? JSON.stringify(valid) : undefined;
        cases.push({ ...base, kind: 'odd OCPI-to/from and request-id headers', path: path(), headers: body ? { ...json, ...headers } : headers, ...(body ? { body } : {}), hostile: false });
        break;
      }
      case 8:
        cases.push({ ...base, kind: 'bad query parameters', method: 'GET', path: `${path()}?${rng.pick(BAD_QUERIES)}`, hostile: true });
        break;
      case 9: {
        const text = valid ? JSON.stringify(valid) : '{}';
        const variant = rng.int(6);
        const [encoding, body, hostile]: [string, Buffer, boolean] =
          variant === 0 ? ['gzip', Buffer.from('definitely not gzip'), true]
          : variant === 1 ? ['compress', Buffer.from(text), true]
          : variant === 2 ? ['gzip, br', gzipSync(text), true]
          : variant === 3 ? ['gzip', gzipSync(Buffer.alloc(4 * 1024 * 1024)), true] // inflates past the body limit
          : variant === 4 ? ['deflate', deflateSync(text), false]
          : ['GZIP', gzipSync(text), false];
        cases.push({ ...base, kind: 'content encoding', path: path(), headers: { ...json, 'content-encoding': encoding }, body, hostile });
        break;
      }
      default: {
        const method = rng.pick(['OPTIONS', 'PROPFIND', 'PATCH', 'DELETE', 'POST', 'PUT', 'SEARCH', 'LOCK']);
        if (method === e.method) continue;
        cases.push({ ...base, kind: 'other method', method, path: path(), headers: {}, hostile: method !== 'DELETE' && method !== 'PUT' && method !== 'PATCH' && method !== 'POST' });
      }
    }
  }
  return cases;
}
