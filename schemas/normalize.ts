import type { SchemaViolation } from './index.ts';

// The one walk over a decoded body that runs before ajv: strings the hub cannot
// keep are refused, and null members of OCPI objects are made absent. Copy-on-write: a body without
// nulls comes back as the same object, and pointers are only worked out for a refused body.

/** JSON Pointer (RFC 6901) of a path; "/" for the root, as the violations use. */
export function pointer(segments: readonly (string | number)[]): string {
  if (segments.length === 0) return '/';
  return segments.map((s) => `/${String(s).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

/**
 * Why a string cannot be kept, or undefined. Postgres text and jsonb hold no U+0000, and an unpaired
 * surrogate is no Unicode scalar value: UTF-8 encoders (Kafka consumers, other JSON parsers) replace or
 * reject it, so the hub would store one thing and serve another.
 */
function unstorable(text: string): string | undefined {
  if (text.includes('\u0000')) return 'contains a NUL character (U+0000)';
  if (!text.isWellFormed()) return 'contains an unpaired surrogate';
  return undefined;
}

/** An own member even for "__proto__" (JSON.parse makes it one; an assignment would set the prototype). */
function define(object: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * Deepest nesting walked. OCPI objects nest a handful of levels (a Tariff's price components sit at
 * depth 5); a body nested deeper is no OCPI object, and walking it would only spend stack.
 */
export const MAX_DEPTH = 32;

export interface Normalized {
  readonly document: unknown;
  readonly violations: SchemaViolation[];
}

interface Findings {
  /** A string that cannot be kept. */
  found: boolean;
  /** Nesting deeper than MAX_DEPTH (not walked further). */
  tooDeep: boolean;
}

/** The hot walk: no path kept. Returns the (copy-on-write) document; `bad` says what was found. */
function strip(value: unknown, dropNulls: boolean, bad: Findings, depth = 0): unknown {
  if (typeof value === 'string') {
    if (unstorable(value)) bad.found = true;
    return value;
  }
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) {
    bad.tooDeep = true;
    return value;
  }
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const next = strip(item, dropNulls, bad, depth + 1);
      if (next !== item) {
        copy ??= value.slice();
        copy[i] = next;
      }
    }
    return copy ?? value;
  }
  const object = value as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  // for...in: a decoded JSON object has only own enumerable members, and no key array is allocated.
  for (const key in object) {
    const member = object[key];
    if (unstorable(key)) bad.found = true;
    const drop = member === null && dropNulls;
    const next = drop ? undefined : strip(member, dropNulls, bad, depth + 1);
    if (!copy && (drop || next !== member)) {
      // The first change: copy the members before this one; later ones are copied as the loop goes on.
      copy = {};
      for (const earlier in object) {
        if (earlier === key) break;
        define(copy, earlier, object[earlier]);
      }
    }
    if (copy && !drop) define(copy, key, next);
  }
  return copy ?? object;
}

/** The slow walk, only for a body known to hold an unstorable string: which ones, by JSON pointer. */
function unstorableStrings(value: unknown, path: (string | number)[], out: SchemaViolation[]): void {
  if (path.length >= MAX_DEPTH) return;
  if (typeof value === 'string') {
    const why = unstorable(value);
    if (why) out.push({ path: pointer(path), message: why });
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => unstorableStrings(item, [...path, i], out));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, member] of Object.entries(value)) {
      const why = unstorable(key);
      if (why) out.push({ path: pointer(path), message: `a member name ${why}` });
      unstorableStrings(member, [...path, key], out);
    }
  }
}

/**
 * Walks `data` once: refuses unstorable strings (values and member names) and, when `dropNulls`,
 * removes members whose value is null (terminology.asciidoc, Cardinality: an optional field "might be
 * null, or the field might be omitted", one meaning). Null array items are kept: a list of nothing is
 * no OCPI value, and ajv refuses them with the item's type. Pointers are only worked out for a body
 * that holds an unstorable string (a second walk), so the common body costs one pass and no copy.
 */
export function normalize(data: unknown, dropNulls: boolean): Normalized {
  const bad: Findings = { found: false, tooDeep: false };
  const document = strip(data, dropNulls, bad);
  const violations: SchemaViolation[] = [];
  if (bad.tooDeep) violations.push({ path: '/', message: `nested deeper than ${MAX_DEPTH} levels` });
  if (bad.found) unstorableStrings(data, [], violations);
  return { document, violations };
}

/** Whether the member a "required" error names was sent as null (the value at `parent` + `field` in `data`). */
export function sentAsNull(data: unknown, parent: string, field: string): boolean {
  let at: unknown = data;
  for (const segment of parent.split('/').slice(1)) {
    if (at === null || typeof at !== 'object') return false;
    at = (at as Record<string, unknown>)[segment.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  return at !== null && typeof at === 'object' && (at as Record<string, unknown>)[field] === null;
}
