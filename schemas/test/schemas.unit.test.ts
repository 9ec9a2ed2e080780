// The JSON Schemas accept the OCPI 2.2.1 examples (shared/ocpi-2.2.1/examples, copied unmodified from
// the specification) and reject the two that NOTICE.md lists as defective.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { createSchemaValidator, type SchemaViolation } from '../index.ts';

const examplesDir = new URL('../../../shared/ocpi-2.2.1/examples/', import.meta.url);
const validator = createSchemaValidator();

interface Rule {
  readonly match: (file: string) => boolean;
  readonly schema: string;
  readonly partial: boolean;
}

const DEFECTIVE = new Set(['location_put_example_add_evse.json', 'tariff_put_example.json']);

const rules: readonly Rule[] = [
  { match: (f) => /^location_example.*\.json$/.test(f), schema: 'ocpi/location.json', partial: false },
  { match: (f) => /^tariff_.*\.json$/.test(f) && !DEFECTIVE.has(f), schema: 'ocpi/tariff.json', partial: false },
  { match: (f) => /^session_example_.*\.json$/.test(f), schema: 'ocpi/session.json', partial: false },
  { match: (f) => f === 'cdr_example.json', schema: 'ocpi/cdr.json', partial: false },
  { match: (f) => /^token_example_.*\.json$/.test(f) || f === 'token_put_example.json', schema: 'ocpi/token.json', partial: false },
  { match: (f) => /^credentials_example.*\.json$/.test(f), schema: 'ocpi/credentials.json', partial: false },
  { match: (f) => /^version_details_example.*\.json$/.test(f), schema: 'ocpi/version_details.json', partial: false },
  { match: (f) => f === 'location_patch_example_location.json', schema: 'ocpi/location.json', partial: true },
  {
    match: (f) => f === 'location_patch_example_status.json' || f === 'location_patch_example_remove_evse.json',
    schema: 'ocpi/evse.json',
    partial: true,
  },
  { match: (f) => f === 'location_patch_example_tariff.json', schema: 'ocpi/connector.json', partial: true },
  { match: (f) => /^session_patch_.*\.json$/.test(f), schema: 'ocpi/session.json', partial: true },
  { match: (f) => f === 'token_patch_example.json', schema: 'ocpi/token.json', partial: true },
];

/** An example's object: the `data` of an OCPI envelope, or the file itself. */
function loadExample(file: string): unknown {
  const json = JSON.parse(readFileSync(new URL(file, examplesDir), 'utf8')) as unknown;
  if (json !== null && typeof json === 'object' && 'status_code' in json) return (json as { data?: unknown }).data;
  return json;
}

const messages = (violations: readonly SchemaViolation[]): string => violations.map((v) => `${v.path} ${v.message}`).join('; ');

const files = readdirSync(examplesDir).filter((f) => f.endsWith('.json')).sort();

describe('createSchemaValidator', () => {
  it('loads the schemas', () => {
    const ids = validator.ids();
    assert.ok(ids.length > 0);
    for (const id of ['ocpi/location.json', 'ocpi/evse.json', 'ocpi/connector.json', 'ocpi/tariff.json', 'ocpi/cdr.json']) {
      assert.ok(ids.includes(id), id);
    }
  });

  it('compiles every schema, full and partial', () => {
    for (const id of validator.ids()) {
      assert.doesNotThrow(() => validator.validate(id, {}).violations, id);
      assert.doesNotThrow(() => validator.validatePartial(id, {}).violations, id);
    }
  });

  it('throws for a schema id it does not know', () => {
    assert.throws(() => validator.validate('ocpi/nope.json', {}).violations, /unknown schema ocpi\/nope\.json/);
  });
});

describe('OCPI 2.2.1 examples', () => {
  it('finds the examples folder and an example for every rule', () => {
    for (const [i, rule] of rules.entries()) assert.ok(files.some(rule.match), `rule ${i} (${rule.schema}) matches no example`);
  });

  for (const file of files) {
    const rule = rules.find((r) => r.match(file));
    if (!rule) continue;
    it(`${file} is valid against ${rule.schema}${rule.partial ? ' as a PATCH' : ''}`, () => {
      const data = loadExample(file);
      const violations = rule.partial ? validator.validatePartial(rule.schema, data).violations : validator.validate(rule.schema, data).violations;
      assert.deepEqual(violations, [], messages(violations));
    });
  }

  it('rejects location_put_example_add_evse.json (floor, numeric physical_reference, no power_type)', () => {
    const violations = validator.validate('ocpi/evse.json', loadExample('location_put_example_add_evse.json')).violations;
    const text = messages(violations);
    assert.ok(violations.some((v) => v.message === 'unknown field "floor"'), text);
    assert.ok(violations.some((v) => v.path === '/physical_reference'), text);
    assert.ok(violations.some((v) => v.message === 'required field power_type missing'), text);
  });

  it('rejects tariff_put_example.json (no last_updated)', () => {
    const violations = validator.validate('ocpi/tariff.json', loadExample('tariff_put_example.json')).violations;
    assert.ok(violations.some((v) => v.path === '/' && v.message === 'required field last_updated missing'), messages(violations));
  });
});

describe('schema violations', () => {
  const token = loadExample('token_example_1_app_user.json') as Record<string, unknown>;

  it('reports an unknown field by name', () => {
    const violations = validator.validate('ocpi/token.json', { ...token, x: 1 }).violations;
    assert.deepEqual(violations, [{ path: '/', message: 'unknown field "x"' }]);
  });

  it('reports a missing required field by name', () => {
    const { last_updated: _omitted, ...rest } = token;
    const violations = validator.validate('ocpi/token.json', rest).violations;
    assert.deepEqual(violations, [{ path: '/', message: 'required field last_updated missing' }]);
  });

  it('does not require fields in a PATCH, but still refuses unknown ones', () => {
    assert.deepEqual(validator.validatePartial('ocpi/token.json', { valid: false }).violations, []);
    assert.deepEqual(validator.validatePartial('ocpi/token.json', { y: 1 }).violations, [{ path: '/', message: 'unknown field "y"' }]);
  });

  it('refuses publish_allowed_to on a published location (mod_locations.asciidoc, Location Object: only when publish is false)', () => {
    const limited = loadExample('location_example_uc4_limited_visibility.json') as Record<string, unknown>;
    assert.equal(limited['publish'], false);
    assert.deepEqual(validator.validate('ocpi/location.json', limited).violations, []);
    assert.notDeepEqual(validator.validate('ocpi/location.json', { ...limited, publish: true }).violations, []);
    const { publish_allowed_to: _dropped, ...published } = limited;
    assert.deepEqual(validator.validate('ocpi/location.json', { ...published, publish: true }).violations, []);
  });

  it('lets a CDR carry gst_ extension fields, but no other unknown field', () => {
    const cdr = loadExample('cdr_example.json') as Record<string, unknown>;
    assert.deepEqual(validator.validate('ocpi/cdr.json', { ...cdr, gst_amount: 1.5, gst_number: 'GST-1' }).violations, []);
    assert.deepEqual(validator.validate('ocpi/cdr.json', { ...cdr, vat_amount: 1.5 }).violations, [{ path: '/', message: 'unknown field "vat_amount"' }]);
  });
});

// mod_locations.asciidoc, PATCH Method: a PATCH carries only the fields to update, and the hub replaces each
// field it carries whole. So only the root object's "required" is relaxed: what is present must be complete.
describe('PATCH bodies (validatePartial)', () => {
  const last_updated = '2026-01-01T00:00:00Z';
  const location = loadExample('location_example.json') as { evses: Array<Record<string, unknown>> };
  const evse = location.evses[0]!;

  const refuses = (schema: string, body: unknown, path: string, field: string): void => {
    const violations = validator.validatePartial(schema, body).violations;
    const text = messages(violations);
    assert.ok(violations.some((v) => v.path === path && v.message === `required field ${field} missing`), `${path} ${field}: ${text}`);
    assert.ok(violations.every((v) => v.path !== '/'), `only the nested object is incomplete: ${text}`);
  };

  // Event schemas are not PATCH bodies: a root anyOf there (party-registered) keeps its "required" on purpose.
  it('lets a PATCH leave out any top-level field, for every OCPI object schema', () => {
    for (const id of validator.ids().filter((i) => i.startsWith('ocpi/'))) assert.deepEqual(validator.validatePartial(id, {}).violations, [], id);
  });

  it('refuses an incomplete EVSE in a location PATCH', () => {
    const body = { evses: [{ status: 'AVAILABLE' }], last_updated };
    for (const field of ['uid', 'connectors', 'last_updated']) refuses('ocpi/location.json', body, '/evses/0', field);
  });

  it('refuses an incomplete connector in an EVSE PATCH', () => {
    const body = { connectors: [{ max_voltage: 230 }], last_updated };
    for (const field of ['id', 'standard', 'format', 'power_type', 'max_amperage', 'last_updated']) refuses('ocpi/evse.json', body, '/connectors/0', field);
  });

  it('refuses partial coordinates in a location PATCH', () => {
    refuses('ocpi/location.json', { coordinates: { latitude: '50.12345' }, last_updated }, '/coordinates', 'longitude');
  });

  it('refuses opening_times without regular_hours when not twentyfourseven (Hours class)', () => {
    refuses('ocpi/location.json', { opening_times: { twentyfourseven: false }, last_updated }, '/opening_times', 'regular_hours');
  });

  it('refuses an incomplete status_schedule entry in an EVSE PATCH', () => {
    const body = { status_schedule: [{}], last_updated };
    for (const field of ['period_begin', 'status']) refuses('ocpi/evse.json', body, '/status_schedule/0', field);
  });

  it('accepts complete nested objects and a subset of the top-level fields', () => {
    assert.deepEqual(validator.validatePartial('ocpi/location.json', { evses: [evse], last_updated }).violations, []);
    assert.deepEqual(validator.validatePartial('ocpi/evse.json', { status: 'AVAILABLE', last_updated }).violations, []);
    assert.deepEqual(validator.validatePartial('ocpi/connector.json', { tariff_ids: ['12', '13'], last_updated }).violations, []);
  });

  it('still refuses unknown fields by name, nested ones included', () => {
    assert.deepEqual(validator.validatePartial('ocpi/location.json', { evses: [{ ...evse, floor: '1' }], last_updated }).violations, [
      { path: '/evses/0', message: 'unknown field "floor"' },
    ]);
  });

  it('applies publish_allowed_to only-when-publish-is-false as a condition, not a demand for publish', () => {
    const publish_allowed_to = [{ uid: 'X', type: 'RFID' }];
    assert.deepEqual(validator.validatePartial('ocpi/location.json', { publish_allowed_to, last_updated }).violations, []);
    assert.deepEqual(validator.validatePartial('ocpi/location.json', { publish: false, publish_allowed_to, last_updated }).violations, []);
    assert.notDeepEqual(validator.validatePartial('ocpi/location.json', { publish: true, publish_allowed_to, last_updated }).violations, []);
  });
});
