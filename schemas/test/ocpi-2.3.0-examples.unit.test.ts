// Every example of the OCPI 2.3.0-ed2 specification (/work/shared/ocpi-2.3.0/examples, vendored for the
// spec text, read from the shared copy) against the 2.3.0 schemas: each object is accepted, but for the
// three examples that are defective themselves (listed in docs/reference/version-mapping.md, OCPI 2.3.0).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { createSchemaValidator, describeViolations } from '../index.ts';

const examples = '/work/shared/ocpi-2.3.0/examples/';
const validator = createSchemaValidator();

/** The schema each example is an instance of; fragments name the $def; envelopes say where the object is. */
function target(file: string): { schema: string; patch?: true; pick?: (json: unknown) => unknown[] } {
  const data = (json: unknown): unknown[] => { const d = (json as { data: unknown }).data; return Array.isArray(d) ? (d as unknown[]) : [d]; };
  if (file.startsWith('location_energymix')) return { schema: 'ocpi-2.3.0/types.json#/$defs/EnergyMix', pick: (j) => [(j as { energy_mix?: unknown }).energy_mix ?? j] };
  if (file.startsWith('location_hours') || file.startsWith('location_regularhours')) return { schema: 'ocpi-2.3.0/location.json#/$defs/Hours', pick: (j) => [(j as { opening_times?: unknown }).opening_times ?? j] };
  if (file === 'location_put_example_add_evse.json') return { schema: 'ocpi-2.3.0/evse.json' };
  if (file.includes('patch')) return { schema: `ocpi-2.3.0/${file.split('_')[0]}.json`, patch: true };
  if (file.startsWith('transport_and_format_get_token')) return { schema: 'ocpi-2.3.0/token.json', pick: data };
  if (file === 'transport_and_format_version_details_example.json') return { schema: 'ocpi-2.3.0/version_details.json', pick: data };
  if (file === 'transport_and_format_version_info_example.json') return { schema: 'ocpi-2.3.0/version.json', pick: data };
  if (file === 'versions_info_example.json') return { schema: 'ocpi-2.3.0/version.json', pick: (j) => j as unknown[] };
  if (file.startsWith('version_details')) return { schema: 'ocpi-2.3.0/version_details.json' };
  if (file.startsWith('type_displaytext')) return { schema: 'ocpi-2.3.0/types.json#/$defs/DisplayText' };
  if (file.startsWith('tariffrestriction')) return { schema: 'ocpi-2.3.0/tariff.json' };
  return { schema: `ocpi-2.3.0/${file.split('_')[0]}.json` };
}

/** Examples that break the 2.3.0 object definitions themselves, with the violation that shows it. */
const DEFECTIVE: Readonly<Record<string, string>> = {
  // mod_cdrs.asciidoc CDR object: tariffs are Tariff objects, whose tax_included is required in 2.3.0.
  'cdr_example.json': '/tariffs/0: required field tax_included missing',
  // mod_tariffs.asciidoc Tariff object: last_updated has cardinality 1.
  'tariff_put_example.json': '/: required field last_updated missing',
  // mod_locations.asciidoc EVSE object: physical_reference is a string(16); the connector lacks power_type, max_voltage...
  'location_put_example_add_evse.json': '/physical_reference: must be string',
};

describe('OCPI 2.3.0 examples against schemas/ocpi-2.3.0', { skip: !existsSync(examples) && 'no /work/shared/ocpi-2.3.0' }, () => {
  for (const file of existsSync(examples) ? readdirSync(examples).filter((f) => f.endsWith('.json')).sort() : []) {
    it(file, () => {
      const json: unknown = JSON.parse(readFileSync(examples + file, 'utf8'));
      const { schema, patch, pick } = target(file);
      const found = (pick ? pick(json) : [json]).flatMap((object) => (patch ? validator.validatePartial(schema, object) : validator.validate(schema, object)).violations);
      const refusal = DEFECTIVE[file];
      if (refusal) assert.ok(describeViolations(found).includes(refusal), describeViolations(found));
      else assert.deepEqual(found, [], describeViolations(found));
    });
  }
});

describe('OCPI 2.3.0 schemas: liberal where 2.3.0 says so, strict where it does not', () => {
  const evse = { uid: '1', status: 'AVAILABLE', connectors: [{ id: '1', standard: 'IEC_62196_T2', format: 'SOCKET', power_type: 'AC_3_PHASE', max_voltage: 230, max_amperage: 16, last_updated: '2026-01-01T00:00:00Z' }], last_updated: '2026-01-01T00:00:00Z' };
  it('accepts unknown fields and unknown values of open enums (transport_and_format.asciidoc Non-specified JSON fields; types.asciidoc OpenEnum)', () => {
    const body = { ...evse, vendor_field: { a: 1 }, capabilities: ['RESERVABLE', 'SOLAR_BOOST'], connectors: [{ ...evse.connectors[0], standard: 'MCS', capabilities: ['ISO_15118_20_PLUG_AND_CHARGE', 'FUTURE_PNC'] }] };
    assert.deepEqual(validator.validate('ocpi-2.3.0/evse.json', body).violations, []);
  });
  it('refuses an unknown value of a closed enum (EVSE status, connector format)', () => {
    const found = describeViolations(validator.validate('ocpi-2.3.0/evse.json', { ...evse, status: 'SLEEPING' }).violations);
    assert.match(found, /\/status/);
    const format = describeViolations(validator.validate('ocpi-2.3.0/connector.json', { ...evse.connectors[0], format: 'WIRELESS' }).violations);
    assert.match(format, /\/format/);
  });
  it('2.2.1 is not weakened: an unknown field or open-enum value is still refused there', () => {
    assert.notDeepEqual(validator.validate('ocpi/evse.json', { ...evse, vendor_field: 1 }).violations, []);
    assert.notDeepEqual(validator.validate('ocpi/evse.json', { ...evse, capabilities: ['SOLAR_BOOST'] }).violations, []);
  });
  it('a 2.3.0 Tariff needs tax_included, a Price needs before_taxes, and 2.3.0 has no HUB role', () => {
    const tariff = { country_code: 'DE', party_id: 'ABC', id: 't', currency: 'EUR', elements: [{ price_components: [{ type: 'ENERGY', price: 0.3, step_size: 1 }] }], last_updated: '2026-01-01T00:00:00Z' };
    assert.match(describeViolations(validator.validate('ocpi-2.3.0/tariff.json', tariff).violations), /tax_included/);
    assert.deepEqual(validator.validate('ocpi-2.3.0/tariff.json', { ...tariff, tax_included: 'N/A' }).violations, []);
    assert.notDeepEqual(validator.validate('ocpi-2.3.0/types.json#/$defs/Price', { excl_vat: 1 }).violations, []);
    assert.notDeepEqual(validator.validate('ocpi-2.3.0/types.json#/$defs/Role', 'HUB').violations, []);
  });
});
