// Every event type has a JSON Schema in schemas/events/<type>.json for its record value (CloudEvents in
// Kafka binary mode: the value is the payload). The schemas accept the payloads the code writes and
// refuse a token in a registry (audit) event and a PATCH without last_updated.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { cdrEventTypes, chargingProfileEventTypes, commandEventTypes, locationEventTypes, registryEventTypes, sessionEventTypes, snapshotEventTypes, tariffEventTypes, tokenEventTypes } from '@hub/events';
import { createSchemaValidator, SCHEMA_BASE, type SchemaViolation } from '../index.ts';

const eventsDir = fileURLToPath(new URL('../events/', import.meta.url));
const examplesDir = new URL('../../../shared/ocpi-2.2.1/examples/', import.meta.url);
const validator = createSchemaValidator();

const allTypes: readonly string[] = [registryEventTypes, locationEventTypes, tariffEventTypes, sessionEventTypes, cdrEventTypes, commandEventTypes, chargingProfileEventTypes, tokenEventTypes, snapshotEventTypes].flatMap(
  (types) => Object.values(types) as string[],
);

/** Every .json under schemas/events, relative to it (a stray file in a subfolder counts too). */
function eventSchemaFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.json'))
    .map((f) => relative(eventsDir, join(dir, f)));
}

type Json = Record<string, unknown>;

function loadExample(file: string): Json {
  const json = JSON.parse(readFileSync(new URL(file, examplesDir), 'utf8')) as Json;
  return 'status_code' in json ? (json['data'] as Json) : json;
}

const check = (type: string, data: unknown): readonly SchemaViolation[] => validator.validate(`events/${type}.json`, data).violations;
const messages = (violations: readonly SchemaViolation[]): string => violations.map((v) => `${v.path} ${v.message}`).join('; ');

function assertValid(type: string, data: unknown): void {
  const violations = check(type, data);
  assert.deepEqual(violations, [], `${type}: ${messages(violations)}`);
}

function assertRefused(type: string, data: unknown, expected: SchemaViolation): void {
  const violations = check(type, data);
  assert.ok(
    violations.some((v) => v.path === expected.path && v.message === expected.message),
    `${type}: expected ${expected.path} ${expected.message}, got ${messages(violations) || 'no violation'}`,
  );
}

// Registry payloads, built as packages/registry/src/{credentials,operations,probe}.ts build them.
const platformId = '0b6f3c1e-9d2a-4c57-8f0e-3a1b2c4d5e6f';
const actor = 'ops-alice';
const parties = [
  { country_code: 'NL', party_id: 'ABC', role: 'CPO' },
  { country_code: 'NL', party_id: 'ABC', role: 'EMSP' },
];
const credentialsData = {
  platform_id: platformId,
  parties,
  versions_url: 'https://partner.example.com/ocpi/versions',
  version_details_url: 'https://partner.example.com/ocpi/2.2.1',
  version: '2.2.1',
  endpoints: [
    { identifier: 'credentials', role: 'RECEIVER', url: 'https://partner.example.com/ocpi/2.2.1/credentials' },
    { identifier: 'locations', role: 'SENDER', url: 'https://partner.example.com/ocpi/2.2.1/locations' },
    { identifier: 'sessions', role: 'RECEIVER', url: 'https://partner.example.com/ocpi/emsp/2.2.1/sessions' },
  ],
};
const cpo = { country_code: 'NL', party_id: 'ABC', role: 'CPO' };

const registryPayloads: ReadonlyArray<readonly [string, string, Json]> = [
  ['new party', registryEventTypes.partyRegistered, { ...cpo, name: 'Alpha Charging', platform_id: platformId, actor }],
  ['reissued initial token', registryEventTypes.partyRegistered, { ...cpo, platform_id: platformId, reissued_initial_token: true, actor }],
  ['POST credentials', registryEventTypes.credentialsRegistered, credentialsData],
  ['PUT credentials', registryEventTypes.credentialsUpdated, credentialsData],
  ['DELETE credentials', registryEventTypes.credentialsDeleted, { platform_id: platformId, parties }],
  ['override set', registryEventTypes.endpointOverridden, { ...cpo, role: 'EMSP', module: 'cdrs', url: 'https://emsp.example.com/cdrs', actor }],
  ['override cleared', registryEventTypes.endpointOverridden, { ...cpo, role: 'EMSP', module: 'cdrs', url: null, actor }],
  [
    'routing rule',
    registryEventTypes.routingRuleChanged,
    { emsp: { country_code: 'DE', party_id: 'XYZ' }, cpo: { country_code: 'NL', party_id: 'ABC' }, enabled: true, actor },
  ],
  ['suspended', registryEventTypes.partySuspended, { ...cpo, actor }],
  ['reinstated', registryEventTypes.partyReinstated, { ...cpo, actor }],
  ['connected', registryEventTypes.platformHealthChanged, { platform_id: platformId, status: 'CONNECTED', error: null }],
  [
    'offline',
    registryEventTypes.platformHealthChanged,
    { platform_id: platformId, status: 'OFFLINE', error: 'no 2.2.1 in versions (2.1.1)' },
  ],
];

const location = loadExample('location_example.json');
const evse = (location['evses'] as Json[])[0] as Json;
const connector = (evse['connectors'] as Json[])[0] as Json;

const ocpiPayloads: ReadonlyArray<readonly [string, string, Json]> = [
  ['location_example.json', locationEventTypes.locationPut, location],
  ['location_example.json evses[0]', locationEventTypes.evsePut, evse],
  ['location_example.json evses[0].connectors[0]', locationEventTypes.connectorPut, connector],
  ['tariff_1_simple_2hour.json', tariffEventTypes.tariffPut, loadExample('tariff_1_simple_2hour.json')],
  ['session_example_1_simple_start.json', sessionEventTypes.sessionPut, loadExample('session_example_1_simple_start.json')],
  ['cdr_example.json', cdrEventTypes.cdrPosted, loadExample('cdr_example.json')],
  ['location_patch_example_location.json', locationEventTypes.locationPatched, loadExample('location_patch_example_location.json')],
  ['location_patch_example_status.json', locationEventTypes.evsePatched, loadExample('location_patch_example_status.json')],
  ['location_patch_example_remove_evse.json', locationEventTypes.evsePatched, loadExample('location_patch_example_remove_evse.json')],
  ['location_patch_example_tariff.json', locationEventTypes.connectorPatched, loadExample('location_patch_example_tariff.json')],
  ['session_patch_example_total_cost.json', sessionEventTypes.sessionPatched, loadExample('session_patch_example_total_cost.json')],
  ['session_patch_example_charging_period.json', sessionEventTypes.sessionPatched, loadExample('session_patch_example_charging_period.json')],
  ['token_example_1_app_user.json', tokenEventTypes.tokenPut, loadExample('token_example_1_app_user.json')],
  ['token_example_2_full_rfid.json', tokenEventTypes.tokenPut, loadExample('token_example_2_full_rfid.json')],
  ['token_patch_example.json', tokenEventTypes.tokenPatched, loadExample('token_patch_example.json')],
];

const patchedTypes = [locationEventTypes.locationPatched, locationEventTypes.evsePatched, locationEventTypes.connectorPatched, sessionEventTypes.sessionPatched];

describe('event schemas', () => {
  it('has exactly one schema file per event type', () => {
    assert.equal(new Set(allTypes).size, allTypes.length, 'event type values are unique');
    assert.deepEqual(eventSchemaFiles(eventsDir).sort(), allTypes.map((t) => `${t}.json`).sort());
  });

  it('gives every schema its $id and a PascalCase title', () => {
    for (const type of allTypes) {
      const schema = JSON.parse(readFileSync(join(eventsDir, `${type}.json`), 'utf8')) as Json;
      assert.equal(schema['$id'], `${SCHEMA_BASE}events/${type}.json`);
      assert.match(String(schema['title']), /^(?:[A-Z][a-z]+)+V[0-9]+$/, type);
      assert.equal(typeof schema['description'], 'string', type);
      assert.ok(validator.ids().includes(`events/${type}.json`), type);
    }
  });
});

describe('registry event payloads', () => {
  for (const [what, type, data] of registryPayloads) {
    it(`${type} accepts the payload of ${what}`, () => assertValid(type, data));
  }

  for (const [what, type, data] of registryPayloads) {
    it(`${type} refuses a token (${what})`, () => assertRefused(type, { ...data, token: 'x' }, { path: '/', message: 'unknown field "token"' }));
  }

  it('refuses a token inside a nested party or endpoint', () => {
    assertRefused(registryEventTypes.credentialsDeleted, { platform_id: platformId, parties: [{ ...cpo, token: 'x' }] }, {
      path: '/parties/0',
      message: 'unknown field "token"',
    });
    const endpoints = [{ identifier: 'credentials', role: 'RECEIVER', url: 'https://p.example.com/c', token: 'x' }];
    assertRefused(registryEventTypes.credentialsUpdated, { ...credentialsData, endpoints }, { path: '/endpoints/0', message: 'unknown field "token"' });
  });

  it('refuses a party-registered payload with neither name nor reissued_initial_token', () => {
    assert.notDeepEqual(check(registryEventTypes.partyRegistered, { ...cpo, platform_id: platformId, actor }), []);
  });

  it('refuses a missing actor, a lower-case party and an unknown role', () => {
    assertRefused(registryEventTypes.partySuspended, cpo, { path: '/', message: 'required field actor missing' });
    assert.notDeepEqual(check(registryEventTypes.partySuspended, { ...cpo, party_id: 'abc', actor }), []);
    assertRefused(registryEventTypes.partySuspended, { ...cpo, role: 'HUB', actor }, { path: '/role', message: 'must be one of CPO, EMSP' });
  });

  it('ties the health error to the status', () => {
    assert.notDeepEqual(check(registryEventTypes.platformHealthChanged, { platform_id: platformId, status: 'CONNECTED', error: 'boom' }), []);
    assert.notDeepEqual(check(registryEventTypes.platformHealthChanged, { platform_id: platformId, status: 'OFFLINE', error: null }), []);
  });
});

describe('OCPI object event payloads', () => {
  for (const [what, type, data] of ocpiPayloads) {
    it(`${type} accepts ${what}`, () => assertValid(type, data));
  }

  for (const type of patchedTypes) {
    it(`${type} refuses a patch without last_updated`, () => {
      assertRefused(type, { id: '1' }, { path: '/', message: 'required field last_updated missing' });
    });

    it(`${type} accepts a patch of last_updated alone (as ingress does) and refuses unknown fields`, () => {
      assertValid(type, { last_updated: '2019-06-24T12:39:09Z' });
      assertRefused(type, { last_updated: '2019-06-24T12:39:09Z', floor: '1' }, { path: '/', message: 'unknown field "floor"' });
    });
  }

  it('carries a PATCH removal (a top-level null) of an optional field, never of a required one', () => {
    assertValid(locationEventTypes.locationPatched, { name: null, opening_times: null, last_updated: '2019-06-24T12:39:09Z' });
    assertValid(locationEventTypes.evsePatched, { floor_level: null, coordinates: null, last_updated: '2019-06-24T12:39:09Z' });
    assertValid(locationEventTypes.connectorPatched, { tariff_ids: null, terms_and_conditions: null, last_updated: '2019-06-24T12:39:09Z' });
    assert.notDeepEqual(check(locationEventTypes.locationPatched, { address: null, last_updated: '2019-06-24T12:39:09Z' }), []);
    assert.notDeepEqual(check(locationEventTypes.evsePatched, { status: null, last_updated: '2019-06-24T12:39:09Z' }), []);
    assertValid(sessionEventTypes.sessionPatched, { end_date_time: null, meter_id: null, authorization_reference: null, last_updated: '2019-06-24T12:39:09Z' });
    assert.notDeepEqual(check(sessionEventTypes.sessionPatched, { kwh: null, last_updated: '2019-06-24T12:39:09Z' }), []);
  });

  it('checks patched fields as the OCPI schemas do', () => {
    assert.notDeepEqual(check(locationEventTypes.evsePatched, { status: 'BROKEN', last_updated: '2019-06-24T12:39:09Z' }), []);
    assert.notDeepEqual(check(locationEventTypes.connectorPatched, { tariff_ids: [15], last_updated: '2019-06-24T12:39:09Z' }), []);
    assert.notDeepEqual(check(locationEventTypes.locationPatched, { name: 'x', last_updated: 'yesterday' }), []);
    assert.notDeepEqual(check(sessionEventTypes.sessionPatched, { status: 'CHARGING', last_updated: '2019-06-24T12:39:09Z' }), []);
    assert.notDeepEqual(check(sessionEventTypes.sessionPatched, { kwh: '5', last_updated: '2019-06-24T12:39:09Z' }), []);
  });

  it('refuses an object that is not valid OCPI', () => {
    const { last_updated: _omitted, ...withoutLastUpdated } = location;
    assertRefused(locationEventTypes.locationPut, withoutLastUpdated, { path: '/', message: 'required field last_updated missing' });
    assertRefused(locationEventTypes.evsePut, { ...evse, floor: '-1' }, { path: '/', message: 'unknown field "floor"' });
  });
});

// Command payloads, built as packages/modules/src/commands/routes.ts and services/dispatcher/src/worker.ts build them.
const startSession = {
  response_url: 'https://emsp.example.com/ocpi/2.2.1/commands/START_SESSION/1234',
  token: { country_code: 'DE', party_id: 'XYZ', uid: '012345678', type: 'RFID', contract_id: 'DE8ACC12E46L89', issuer: 'TheNewMotion', valid: true, whitelist: 'ALLOWED', last_updated: '2018-12-10T17:16:15Z' },
  location_id: 'LOC1',
  evse_uid: '3256',
};
const commandPayloads: ReadonlyArray<readonly [string, string, Json]> = [
  ['an eMSP START_SESSION', commandEventTypes.requested, { command: 'START_SESSION', request: startSession }],
  ['the CPO accepting', commandEventTypes.cpoResponded, { response: { result: 'ACCEPTED', timeout: 30 } }],
  ['a CPO that did not answer usably', commandEventTypes.cpoResponded, { response: null }],
  ['a result to forward', commandEventTypes.resultReceived, { result: { result: 'ACCEPTED' }, forwarded: true }],
  ['a late result, recorded only', commandEventTypes.resultReceived, { result: { result: 'FAILED', message: [{ language: 'en', text: 'EVSE out of order' }] }, forwarded: false }],
  ['the hub timing out', commandEventTypes.timedOut, { result: { result: 'TIMEOUT' } }],
];

// Charging profile payloads, built as packages/modules/src/chargingprofiles/routes.ts and
// services/dispatcher/src/charging-profile-timeouts.ts build them.
const chargingProfile = { charging_rate_unit: 'A', min_charging_rate: 6.1, charging_profile_period: [{ start_period: 0, limit: 16 }, { start_period: 900, limit: 8.1 }] };
const activeProfile = { start_date_time: '2026-11-26T12:00:00Z', charging_profile: chargingProfile };
const chargingProfilePayloads: ReadonlyArray<readonly [string, string, unknown]> = [
  ['an eMSP SetChargingProfile', chargingProfileEventTypes.requested, { operation: 'SET', session_id: 'S1', response_url: 'https://emsp.example.com/r/1', request: { charging_profile: chargingProfile, response_url: 'https://emsp.example.com/r/1' } }],
  ['an eMSP GET of the active profile', chargingProfileEventTypes.requested, { operation: 'GET', session_id: 'S1', response_url: 'https://emsp.example.com/r/2', duration: 900 }],
  ['the CPO accepting', chargingProfileEventTypes.cpoResponded, { response: { result: 'ACCEPTED', timeout: 30 } }],
  ['a CPO that did not answer usably', chargingProfileEventTypes.cpoResponded, { response: null }],
  ['an ActiveChargingProfileResult', chargingProfileEventTypes.resultReceived, { operation: 'GET', result: { result: 'ACCEPTED', profile: activeProfile }, forwarded: true }],
  ['the hub timing out', chargingProfileEventTypes.timedOut, { operation: 'CLEAR', result: { result: 'REJECTED' } }],
  ['a CPO update', chargingProfileEventTypes.activeProfilePut, activeProfile],
];

describe('charging profile event payloads', () => {
  for (const [what, type, data] of chargingProfilePayloads) {
    it(`${type} accepts ${what}`, () => assertValid(type, data));
  }
  it('refuses a limit with two digits of fraction and an unknown rate unit', () => {
    assert.notDeepEqual(check(chargingProfileEventTypes.activeProfilePut, { ...activeProfile, charging_profile: { ...chargingProfile, charging_profile_period: [{ start_period: 0, limit: 8.15 }] } }), []);
    assert.notDeepEqual(check(chargingProfileEventTypes.activeProfilePut, { ...activeProfile, charging_profile: { ...chargingProfile, charging_rate_unit: 'kW' } }), []);
  });
});

describe('command event payloads', () => {
  for (const [what, type, data] of commandPayloads) {
    it(`${type} accepts ${what}`, () => assertValid(type, data));
  }

  it('a tariff deletion carries an empty object, nothing else', () => {
    assertValid(tariffEventTypes.tariffDeleted, {});
    assertRefused(tariffEventTypes.tariffDeleted, { id: 'T1' }, { path: '/', message: 'unknown field "id"' });
  });

  it('refuses an unknown command, a result outside OCPI and a response with an unknown field', () => {
    assert.notDeepEqual(check(commandEventTypes.requested, { command: 'UNLOCK_NOW', request: startSession }), []);
    assert.notDeepEqual(check(commandEventTypes.timedOut, { result: { result: 'MAYBE' } }), []);
    assert.notDeepEqual(check(commandEventTypes.cpoResponded, { response: { result: 'ACCEPTED', timeout: 30, extra: 1 } }), []);
    assertRefused(commandEventTypes.resultReceived, { result: { result: 'ACCEPTED' } }, { path: '/', message: 'required field forwarded missing' });
  });
});
