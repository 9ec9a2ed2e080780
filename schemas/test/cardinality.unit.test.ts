// The schema layer's rules for what a real OCPI 2.2.1 platform sends:
// one walk before ajv refuses strings the hub cannot keep and makes null members absent
// (terminology.asciidoc, Cardinality); identifiers are never empty; DateTime and language are read
// liberally where the meaning is unambiguous; every refusal is one short pointer-first message.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { createSchemaValidator, describeViolations, type SchemaViolation } from '../index.ts';

const validator = createSchemaValidator();
type Json = Record<string, unknown>;
const example = (file: string): Json => {
  const json = JSON.parse(readFileSync(new URL(`../../../shared/ocpi-2.2.1/examples/${file}`, import.meta.url), 'utf8')) as Json;
  return ('status_code' in json ? json['data'] : json) as Json;
};
const location = example('location_example.json');
const evse = (location['evses'] as Json[])[0]!;
const connector = (evse['connectors'] as Json[])[0]!;
const tariff = example('tariff_2_alt_text.json');
const session = example('session_example_1_simple_start.json');
const cdr = example('cdr_example.json');
const token = example('token_example_1_app_user.json');
const last_updated = '2026-11-22T10:00:00Z';

const text = (violations: readonly SchemaViolation[]): string => describeViolations(violations);
const ok = (schema: string, body: unknown): unknown => {
  const { document, violations } = validator.validate(schema, body);
  assert.deepEqual(violations, [], text(violations));
  return document;
};
const refused = (schema: string, body: unknown): readonly SchemaViolation[] => {
  const { violations } = validator.validate(schema, body);
  assert.notDeepEqual(violations, [], 'expected a refusal');
  return violations;
};
const hasNull = (value: unknown): boolean =>
  value === null || (typeof value === 'object' && Object.values(value).some((v) => hasNull(v)));

describe('strings the hub cannot keep', () => {
  it('refuses a NUL character in any string, nested, naming the pointer', () => {
    const body = { ...location, evses: [{ ...evse, uid: 'EVSE\u00001' }] };
    assert.deepEqual(refused('ocpi/location.json', body), [{ path: '/evses/0/uid', message: 'contains a NUL character (U+0000)' }]);
  });

  it('refuses an unpaired surrogate (high or low), but not a real pair (an emoji)', () => {
    assert.deepEqual(refused('ocpi/location.json', { ...location, name: 'Gent \ud83d' }), [{ path: '/name', message: 'contains an unpaired surrogate' }]);
    assert.deepEqual(refused('ocpi/location.json', { ...location, directions: [{ language: 'en', text: '\udc00 left' }] }), [{ path: '/directions/0/text', message: 'contains an unpaired surrogate' }]);
    ok('ocpi/location.json', { ...location, name: 'Gent \ud83d\udd0c' });
  });

  it('checks member names too, and PATCH bodies, command bodies and event payloads alike', () => {
    const violations = refused('ocpi/location.json', { ...location, ['x\u0000']: 1 });
    assert.ok(violations.some((v) => v.path === '/' && v.message === 'a member name contains a NUL character (U+0000)'), text(violations));
    assert.deepEqual(validator.validatePartial('ocpi/evse.json', { status: 'AVAILABLE', floor_level: '\u0000', last_updated }).violations, [{ path: '/floor_level', message: 'contains a NUL character (U+0000)' }]);
    const start = { response_url: 'https://emsp.example/r', token: { ...token, visual_number: 'x\ud800' }, location_id: 'LOC1' };
    assert.ok(refused('ocpi/start_session.json', start).some((v) => v.path === '/token/visual_number'));
  });

  it('refuses a body nested deeper than any OCPI object without walking all of it (no stack overflow)', () => {
    let deep: unknown = 'leaf\u0000';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const violations = refused('ocpi/location.json', { ...location, name: deep });
    assert.ok(violations.some((v) => v.path === '/' && v.message === 'nested deeper than 32 levels'), text(violations));
    assert.ok(validator.validatePartial('ocpi/evse.json', { status: deep, last_updated }).violations.length > 0);
  });

  it('escapes ~ and / in the pointer (RFC 6901)', () => {
    assert.deepEqual(refused('ocpi/location.json', { ...location, ['a/b~']: '\u0000' }).find((v) => v.message.startsWith('contains')), { path: '/a~1b~0', message: 'contains a NUL character (U+0000)' });
  });
});

describe('cardinality: null is absent, [] is an empty "*" list', () => {
  it('accepts null for optional fields and stores the document without them', () => {
    const body = {
      ...location,
      name: null,
      postal_code: null,
      related_locations: null,
      parking_type: null,
      operator: { name: 'Op', website: null, logo: null },
      suboperator: null,
      opening_times: { twentyfourseven: true, regular_hours: null, exceptional_openings: null, exceptional_closings: null },
      evses: [{ ...evse, coordinates: null, evse_id: null, connectors: [{ ...connector, terms_and_conditions: null, tariff_ids: null, max_electric_power: null }] }],
      energy_mix: null,
    };
    const document = ok('ocpi/location.json', body) as Json;
    assert.equal(hasNull(document), false, JSON.stringify(document));
    assert.equal('name' in document, false);
    assert.deepEqual(document['operator'], { name: 'Op' });
    assert.deepEqual(document['opening_times'], { twentyfourseven: true });
    assert.equal(hasNull(body), true, 'the request body itself is not changed');
  });

  it('accepts regular_hours [] with twentyfourseven true, and refuses entries there', () => {
    ok('ocpi/location.json', { ...location, opening_times: { twentyfourseven: true, regular_hours: [] } });
    const violations = refused('ocpi/location.json', { ...location, opening_times: { twentyfourseven: true, regular_hours: [{ weekday: 1, period_begin: '08:00', period_end: '18:00' }] } });
    assert.deepEqual(violations, [{ path: '/opening_times/regular_hours', message: 'not allowed when twentyfourseven is true' }]);
  });

  it('accepts null for tariff_alt_text and other "*" and "?" fields of tariffs, sessions and CDRs', () => {
    assert.equal(hasNull(ok('ocpi/tariff.json', { ...tariff, tariff_alt_text: null, tariff_alt_url: null, min_price: null, start_date_time: null, energy_mix: null })), false);
    assert.equal(hasNull(ok('ocpi/session.json', { ...session, end_date_time: null, authorization_reference: null, meter_id: null, charging_periods: null, total_cost: null })), false);
    assert.equal(hasNull(ok('ocpi/cdr.json', { ...cdr, session_id: null, tariffs: null, signed_data: null, remark: null, credit: null, total_parking_time: null })), false);
  });

  it('accepts [] for every "*" list', () => {
    ok('ocpi/location.json', {
      ...location,
      publish_allowed_to: [],
      related_locations: [],
      directions: [],
      facilities: [],
      images: [],
      evses: [{ ...evse, status_schedule: [], capabilities: [], directions: [], parking_restrictions: [], images: [], connectors: [{ ...connector, tariff_ids: [] }] }],
      opening_times: { twentyfourseven: false, regular_hours: [{ weekday: 1, period_begin: '08:00', period_end: '18:00' }], exceptional_openings: [], exceptional_closings: [] },
      energy_mix: { is_green_energy: true, energy_sources: [], environ_impact: [] },
    });
    ok('ocpi/tariff.json', { ...tariff, tariff_alt_text: [] });
    ok('ocpi/session.json', { ...session, charging_periods: [] });
    ok('ocpi/cdr.json', { ...cdr, tariffs: [] });
    ok('ocpi/location_references.json', { location_id: 'LOC1', evse_uids: [] });
    ok('ocpi/command_response.json', { result: 'ACCEPTED', timeout: 30, message: [] });
  });

  it('refuses [] for a "+" list', () => {
    assert.ok(refused('ocpi/evse.json', { ...evse, connectors: [] }).some((v) => v.path === '/connectors'));
    assert.ok(refused('ocpi/tariff.json', { ...tariff, elements: [] }).some((v) => v.path === '/elements'));
    assert.ok(refused('ocpi/cdr.json', { ...cdr, charging_periods: [] }).some((v) => v.path === '/charging_periods'));
    assert.ok(refused('ocpi/credentials.json', { token: 'abc', url: 'https://x.example/versions', roles: [] }).some((v) => v.path === '/roles'));
  });

  it('refuses null for a required field, saying so', () => {
    assert.deepEqual(refused('ocpi/location.json', { ...location, last_updated: null }), [{ path: '/', message: 'required field last_updated is null' }]);
    assert.deepEqual(refused('ocpi/location.json', { ...location, evses: [{ ...evse, status: null }] }), [{ path: '/evses/0', message: 'required field status is null' }]);
  });

  it('refuses a null list item', () => {
    assert.deepEqual(refused('ocpi/evse.json', { ...evse, capabilities: [null] }), [{ path: '/capabilities/0', message: 'must be string' }]);
  });

  it('gives back the very object when it carries no null (no copy on the hot path)', () => {
    const body = { ...location };
    assert.equal(validator.validate('ocpi/location.json', body).document, body);
    const patch = { status: 'CHARGING', last_updated };
    assert.equal(validator.validatePartial('ocpi/evse.json', patch).document, patch);
  });

  it('keeps null where an event schema means it (events are not OCPI objects)', () => {
    const { document } = validator.validate('events/ocpi.commands.cpo-responded.v1.json', { x: null });
    assert.deepEqual(document, { x: null });
  });
});

describe('PATCH with null (null removes an optional field)', () => {
  it('keeps a top-level null of an optional field (the projector removes the field) and strips nested nulls', () => {
    const { document, violations } = validator.validatePartial('ocpi/location.json', { name: null, operator: { name: 'Op', logo: null }, last_updated });
    assert.deepEqual(violations, []);
    assert.deepEqual(document, { name: null, operator: { name: 'Op' }, last_updated });
  });

  it('refuses removing a required field', () => {
    assert.deepEqual(validator.validatePartial('ocpi/location.json', { address: null, last_updated }).violations, [{ path: '/address', message: 'required field address cannot be removed (null)' }]);
    assert.deepEqual(validator.validatePartial('ocpi/evse.json', { status: 'AVAILABLE', last_updated: null }).violations, [{ path: '/last_updated', message: 'required field last_updated cannot be removed (null)' }]);
  });

  it('lets publish_allowed_to be removed (null) or emptied while publish becomes true', () => {
    assert.deepEqual(validator.validatePartial('ocpi/location.json', { publish: true, publish_allowed_to: null, last_updated }).violations, []);
    assert.deepEqual(validator.validatePartial('ocpi/location.json', { publish: true, publish_allowed_to: [], last_updated }).violations, []);
    assert.deepEqual(validator.validatePartial('ocpi/location.json', { publish: true, publish_allowed_to: [{ uid: 'T1', type: 'RFID' }], last_updated }).violations, [
      { path: '/publish_allowed_to', message: 'only allowed when publish is false' },
    ]);
  });
});

describe('required identifiers are never empty', () => {
  const start = { response_url: 'https://emsp.example/r', token, location_id: 'LOC1' };
  const cases: Array<[string, unknown, string]> = [
    ['ocpi/start_session.json', { ...start, token: { ...token, uid: '' } }, '/token/uid'],
    ['ocpi/start_session.json', { ...start, token: { ...token, contract_id: '' } }, '/token/contract_id'],
    ['ocpi/start_session.json', { ...start, token: { ...token, issuer: '' } }, '/token/issuer'],
    ['ocpi/start_session.json', { ...start, location_id: '' }, '/location_id'],
    ['ocpi/start_session.json', { ...start, evse_uid: '' }, '/evse_uid'],
    ['ocpi/start_session.json', { ...start, evse_uid: 'E1', connector_id: '' }, '/connector_id'],
    ['ocpi/stop_session.json', { response_url: 'https://emsp.example/r', session_id: '' }, '/session_id'],
    ['ocpi/reserve_now.json', { response_url: 'https://emsp.example/r', token, expiry_date: last_updated, reservation_id: '', location_id: 'L' }, '/reservation_id'],
    ['ocpi/cancel_reservation.json', { response_url: 'https://emsp.example/r', reservation_id: '' }, '/reservation_id'],
    ['ocpi/location_references.json', { location_id: '' }, '/location_id'],
    ['ocpi/location_references.json', { location_id: 'L', evse_uids: [''] }, '/evse_uids/0'],
    ['ocpi/location.json', { ...location, id: '' }, '/id'],
    ['ocpi/evse.json', { ...evse, uid: '' }, '/uid'],
    ['ocpi/connector.json', { ...connector, id: '' }, '/id'],
    ['ocpi/tariff.json', { ...tariff, id: '' }, '/id'],
    ['ocpi/session.json', { ...session, id: '' }, '/id'],
    ['ocpi/session.json', { ...session, cdr_token: { ...(session['cdr_token'] as Json), uid: '' } }, '/cdr_token/uid'],
    ['ocpi/cdr.json', { ...cdr, cdr_location: { ...(cdr['cdr_location'] as Json), evse_uid: '' } }, '/cdr_location/evse_uid'],
    ['ocpi/credentials.json', { token: '', url: 'https://x.example/versions', roles: [{ role: 'CPO', country_code: 'NL', party_id: 'ABC', business_details: { name: 'X' } }] }, '/token'],
  ];
  for (const [schema, body, path] of cases) {
    it(`${schema} ${path}`, () => assert.deepEqual(refused(schema, body), [{ path, message: 'must not be empty' }]));
  }
});

describe('liberal where the meaning is unambiguous', () => {
  it('accepts a language code in any letter case, stored as sent', () => {
    const document = ok('ocpi/tariff.json', { ...tariff, tariff_alt_text: [{ language: 'FR', text: 'Prix' }, { language: 'En', text: 'Price' }] }) as Json;
    assert.deepEqual((document['tariff_alt_text'] as Json[]).map((t) => t['language']), ['FR', 'En']);
    assert.deepEqual(refused('ocpi/tariff.json', { ...tariff, tariff_alt_text: [{ language: 'fra', text: 'x' }] }), [
      { path: '/tariff_alt_text/0/language', message: 'must be an ISO 639-1 language code of 2 letters' },
    ]);
  });

  it('accepts a DateTime without Z, with +00:00 and with fractional seconds, stored as sent', () => {
    for (const t of ['2026-11-22T10:00:00', '2026-11-22T10:00:00+00:00', '2026-11-22T10:00:00.123456Z', '2026-11-22T10:00:00.5']) {
      assert.equal((ok('ocpi/location.json', { ...location, last_updated: t }) as Json)['last_updated'], t);
    }
  });

  it('refuses another offset and an impossible or unstorable DateTime, with a message that does not echo it', () => {
    assert.deepEqual(refused('ocpi/location.json', { ...location, last_updated: '2026-11-22T10:00:00+01:00' }), [
      { path: '/last_updated', message: 'must be a UTC DateTime YYYY-MM-DDThh:mm:ss[.fraction][Z|+00:00]' },
    ]);
    for (const t of ['2026-02-30T10:00:00Z', '2026-13-01T00:00:00Z', '2026-01-01T24:00:00Z', '0000-01-01T00:00:00Z']) {
      const violations = refused('ocpi/session.json', { ...session, start_date_time: t });
      assert.equal(violations.length, 1, text(violations));
      assert.equal(violations[0]?.path, '/start_date_time');
      assert.match(violations[0]?.message ?? '', /^not a real date and time/);
    }
    assert.ok(refused('ocpi/session.json', { ...session, start_date_time: '12026-01-01T00:00:00Z' }).some((v) => v.path === '/start_date_time'));
  });
});

describe('one precise message per refusal', () => {
  it('names the pointer and the rule for opening_times, without if/then/else wrappers', () => {
    assert.equal(text(refused('ocpi/location.json', { ...location, opening_times: { regular_hours: [] } })), '/opening_times: required field twentyfourseven missing');
    assert.equal(text(refused('ocpi/location.json', { ...location, opening_times: { twentyfourseven: false } })), '/opening_times: required field regular_hours missing');
    assert.equal(text(refused('ocpi/location.json', { ...location, opening_times: { twentyfourseven: false, regular_hours: [] } })), '/opening_times/regular_hours: needs at least one entry when twentyfourseven is false');
    assert.equal(text(refused('ocpi/start_session.json', { response_url: 'https://emsp.example/r', token, location_id: 'L', connector_id: '1' })), '/: required field evse_uid missing (connector_id is present)');
  });

  it('words the other conditional rules and never says "boolean schema is false" or "must match"', () => {
    assert.equal(text(refused('ocpi/cdr.json', { ...cdr, credit: true })), '/: required field credit_reference_id missing (credit is true)');
    const publishTo = refused('ocpi/location.json', { ...location, publish: false, publish_allowed_to: [{ type: 'RFID' }] });
    assert.equal(text(publishTo), '/publish_allowed_to/0: needs uid, visual_number or group_id');
    for (const v of [...publishTo]) assert.doesNotMatch(v.message, /boolean schema|must match/);
  });

  it('never echoes a value: a token uid or contract id that breaks a rule is not repeated', () => {
    const secret = 'S3CRET-TOKEN-VALUE-0123456789-ABCDEFGHIJ';
    const violations = refused('ocpi/token.json', { ...token, uid: secret, contract_id: `${secret}\u0000`, issuer: 42 });
    assert.doesNotMatch(text(violations), /S3CRET/);
  });
});
