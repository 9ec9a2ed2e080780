import type { ErrorObject } from 'ajv/dist/2020.js';
import { pointer, sentAsNull } from './normalize.ts';
import type { SchemaViolation } from './index.ts';

// One short, pointer-first message per refusal: "/opening_times: required field
// twentyfourseven missing". ajv's wrapper errors (if/then/else "must match", anyOf/oneOf summaries)
// are dropped for the specific inner error; a schema can word a rule itself with "x-messages"
// ({ keyword: message }) next to the keyword. Messages name fields and rules, never a value sent (a
// token, a contract id), except an unknown member's name, shortened.

/** Wrapper keywords whose failure is only the sum of inner errors that are reported anyway. */
const WRAPPERS = new Set(['if', 'then', 'else', 'anyOf', 'oneOf', 'allOf']);

/** Keywords about an object's members: several per object are several refusals. */
const MEMBER_RULES = new Set(['required', 'additionalProperties', 'dependentRequired']);

const DATE_TIME_SHAPE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|\+00:00)?$/;

function custom(e: ErrorObject): string | undefined {
  const messages = (e.parentSchema as { 'x-messages'?: Record<string, string> } | undefined)?.['x-messages'];
  return messages?.[e.keyword];
}

function message(e: ErrorObject, sent: unknown): string {
  const own = custom(e);
  if (own) return own;
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required': {
      const field = String(params['missingProperty']);
      return sentAsNull(sent, e.instancePath, field) ? `required field ${field} is null` : `required field ${field} missing`;
    }
    case 'additionalProperties': {
      const name = String(params['additionalProperty']);
      return `unknown field ${JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}…` : name)}`;
    }
    case 'dependentRequired':
      return `required field ${String(params['missingProperty'])} missing (${String(params['property'])} is present)`;
    case 'enum':
      return `must be one of ${(params['allowedValues'] as unknown[]).join(', ')}`;
    case 'minLength':
      return params['limit'] === 1 ? 'must not be empty' : (e.message ?? 'is too short');
    case 'format':
      // types.asciidoc, DateTime. The value is not echoed; its shape tells which rule it broke.
      return typeof e.data === 'string' && DATE_TIME_SHAPE.test(e.data)
        ? 'not a real date and time (month 01-12, a day of that month, hour 00-23, second 00-59, year 0001-9999)'
        : 'must be a UTC DateTime YYYY-MM-DDThh:mm:ss[.fraction][Z|+00:00]';
    case 'false schema':
      return 'not allowed here';
    default:
      return e.message ?? 'is invalid';
  }
}

/** `sent` is the body as sent (before nulls were made absent), to tell "is null" from "missing". */
export function violations(errors: ErrorObject[] | null | undefined, sent: unknown): SchemaViolation[] {
  const out: SchemaViolation[] = [];
  const seen = new Set<string>();
  // One message per value: the first rule a value breaks (its type before its enum, "must not be empty"
  // before its pattern). Rules about an object's members (required, unknown) each name their field.
  const refusedValues = new Set<string>();
  for (const e of errors ?? []) {
    if (WRAPPERS.has(e.keyword)) continue;
    if (!MEMBER_RULES.has(e.keyword)) {
      if (refusedValues.has(e.instancePath)) continue;
      refusedValues.add(e.instancePath);
    }
    const v: SchemaViolation = { path: e.instancePath || '/', message: message(e, sent) };
    const key = `${v.path}\u0000${v.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (e.keyword === 'additionalProperties') Object.defineProperty(v, 'member', { value: String(e.params['additionalProperty']), enumerable: false });
    out.push(v);
  }
  return out;
}

export { pointer };
