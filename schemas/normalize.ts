import type { SchemaViolation } from './index.ts';

// The one walk over a decoded body that runs before ajv (issue 10.1, 11.1): strings the hub cannot
// keep are refused, and null members of OCPI objects are made absent. Copy-on-write: a body without
// nulls comes back as the same object, with no allocation but the path stack.

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

export interface Normalized {
  readonly document: unknown;
  /** Pointers of the null members that were removed (only allocated when one was found). */
  readonly nulls: ReadonlySet<string> | undefined;
  readonly violations: SchemaViolation[];
}

/**
 * Walks `data`: refuses unstorable strings (values and member names) and, when `dropNulls`, removes
 * members whose value is null (terminology.asciidoc, Cardinality: an optional field "might be null, or
 * the field might be omitted", one meaning). Null array items are kept: a list of nothing is no OCPI
 * value, and ajv refuses them with the item's type.
 */
export function normalize(data: unknown, dropNulls: boolean): Normalized {
  const violations: SchemaViolation[] = [];
  let nulls: Set<string> | undefined;
  const path: (string | number)[] = [];

  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') {
      const why = unstorable(value);
      if (why) violations.push({ path: pointer(path), message: why });
      return value;
    }
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        path.push(i);
        const next = walk(item);
        path.pop();
        if (next !== item) {
          copy ??= value.slice();
          copy[i] = next;
        }
      }
      return copy ?? value;
    }
    const object = value as Record<string, unknown>;
    let copy: Record<string, unknown> | undefined;
    const keys = Object.keys(object);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const member = object[key];
      const why = unstorable(key);
      if (why) violations.push({ path: pointer(path), message: `a member name ${why}` });
      path.push(key);
      if (member === null && dropNulls) {
        (nulls ??= new Set()).add(pointer(path));
        // The first null: copy the members before it; later members are copied as the loop goes on.
        copy ??= Object.fromEntries(keys.slice(0, i).map((k) => [k, object[k]]));
      } else {
        const next = walk(member);
        if (next !== member || copy) define((copy ??= Object.fromEntries(keys.slice(0, i).map((k) => [k, object[k]]))), key, next);
      }
      path.pop();
    }
    return copy ?? object;
  };

  const document = walk(data);
  return { document, nulls, violations };
}
