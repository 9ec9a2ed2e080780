// The corpus under test/corpus (payloads written the way other platforms write them) against the
// schema layer alone: every valid payload is accepted and normalized to strict OCPI (no null left),
// every invalid one is refused with the status_message its file names. test/corpus.e2e.test.ts
// pushes the same files through the real ingress.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { createSchemaValidator, describeViolations } from '../index.ts';

const corpus = new URL('../../test/corpus/', import.meta.url);
const validator = createSchemaValidator();
const hasNull = (value: unknown): boolean => value === null || (typeof value === 'object' && Object.values(value).some((v) => hasNull(v)));

for (const object of readdirSync(corpus).sort()) {
  describe(`corpus: ${object}`, () => {
    const schema = `ocpi/${object}.json`;
    for (const kind of ['valid', 'invalid'] as const) {
      for (const file of readdirSync(new URL(`${object}/${kind}/`, corpus)).sort()) {
        const json = JSON.parse(readFileSync(new URL(`${object}/${kind}/${file}`, corpus), 'utf8')) as { refusal?: string; body?: unknown };
        it(`${kind}/${file}`, () => {
          if (kind === 'valid') {
            const { document, violations } = validator.validate(schema, json);
            assert.deepEqual(violations, [], describeViolations(violations));
            assert.equal(hasNull(document), false);
            assert.deepEqual(validator.validate(schema, document).violations, [], 'the normalized document is strict OCPI');
          } else {
            const { violations } = validator.validate(schema, json.body);
            assert.ok(describeViolations(violations).includes(json.refusal ?? '?'), `${describeViolations(violations)} should include ${json.refusal}`);
          }
        });
      }
    }
  });
}
