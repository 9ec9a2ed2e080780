// The OCPI examples the tests translate: the JSON blocks of the 2.1.1 chapters (shared/ocpi-2.1.1/*.md,
// unmodified copies of the specification) and the 2.2.1 example files (shared/ocpi-2.2.1/examples).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createSchemaValidator, describeViolations } from '@hub/schemas';
import { withoutVersionFields } from '../src/index.ts';

const shared = new URL('../../../../shared/', import.meta.url);
export const validator = createSchemaValidator();

export interface Example {
  /** The heading the block sits under, e.g. "Simple Session example of a just starting session". */
  readonly heading: string;
  /** The request line before the body ("PATCH To URL: ..."), when the block has one. */
  readonly request?: string;
  /** The block's text after the request line. */
  readonly text: string;
}

/** The ```json blocks of one 2.1.1 chapter, in order. */
export function examples211(chapter: string): Example[] {
  const text = readFileSync(new URL(`ocpi-2.1.1/${chapter}`, shared), 'utf8');
  const out: Example[] = [];
  for (const m of text.matchAll(/```json\n([\s\S]*?)```/g)) {
    const heading = (text.slice(0, m.index).split('\n').filter((l) => l.startsWith('#')).pop() ?? '').replace(/^#+\s*/, '').trim();
    const block = m[1] ?? '';
    const request = /^(PUT|PATCH|POST|GET) To URL: .*$/m.exec(block)?.[0];
    out.push({ heading, ...(request ? { request } : {}), text: request ? block.slice(block.indexOf(request) + request.length) : block });
  }
  return out;
}

/** The JSON of the one example under a heading that starts with `heading`. */
export function example211(chapter: string, heading: string): unknown {
  const all = examples211(chapter);
  const exact = all.filter((e) => e.heading === heading);
  const found = exact.length > 0 ? exact : all.filter((e) => e.heading.startsWith(heading));
  assert.equal(found.length, 1, `${chapter}: one example under "${heading}"`);
  return JSON.parse(found[0]?.text ?? '') as unknown;
}

/** A 2.2.1 example file's object: the data of an envelope, or the file itself. */
export function example221(file: string): unknown {
  const json = JSON.parse(readFileSync(new URL(`ocpi-2.2.1/examples/${file}`, shared), 'utf8')) as unknown;
  return json !== null && typeof json === 'object' && 'status_code' in json ? (json as { data?: unknown }).data : json;
}

export const clone = <T>(value: T): T => structuredClone(value);

/** Asserts the object is valid against a schema (the hub-private member removed first, as every 2.2.1 serializer does). */
export function assertValid(schema: string, object: unknown, partial = false): void {
  const body = object !== null && typeof object === 'object' ? withoutVersionFields(object) : object;
  const { violations } = partial ? validator.validatePartial(schema, body) : validator.validate(schema, body);
  assert.deepEqual(violations, [], `${schema}: ${describeViolations(violations)}`);
}

/** The schema's violations' pointers (to assert what a defective example gets wrong). */
export function refusedAt(schema: string, object: unknown): string[] {
  return validator.validate(schema, object).violations.map((v) => v.path);
}

export const NL_ABC = { countryCode: 'NL', partyId: 'ABC' } as const;
export const DE_EMS = { countryCode: 'DE', partyId: 'EMS' } as const;
