// The version list, the adapters' registry, the hub-private member and the 2.1.1 driver reference.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Token } from '../src/index.ts';
import { adapterFor, cdrTokenFromAuthId, isOcpiVersion, mergeVersionFields, parseEmaId, parseOcpiVersion, schemaId, SUPPORTED_VERSIONS, withoutVersionFields } from '../src/index.ts';
import { example221, validator } from './examples.ts';

describe('versions', () => {
  it('supports 2.3.0, 2.2.1 and 2.1.1, newest first, and nothing else', () => {
    assert.deepEqual(SUPPORTED_VERSIONS, ['2.3.0', '2.2.1', '2.1.1']);
    for (const v of SUPPORTED_VERSIONS) {
      assert.equal(isOcpiVersion(v), true);
      assert.equal(adapterFor(v).version, v);
    }
    for (const v of ['2.1', '2.2', '2.3', '2.4.0', '', 2.1, undefined]) assert.equal(parseOcpiVersion(v), undefined, String(v));
  });

  it('names each version\'s schemas, and every object name the adapters use has one in every version', () => {
    assert.equal(schemaId('2.2.1', 'location'), 'ocpi/location.json');
    assert.equal(adapterFor('2.1.1').schemaId('location'), 'ocpi-2.1.1/location.json');
    assert.equal(adapterFor('2.3.0').schemaId('location'), 'ocpi-2.3.0/location.json');
    const ids = new Set(validator.ids());
    for (const object of ['location', 'evse', 'connector', 'tariff', 'token', 'session', 'cdr', 'authorization_info', 'location_references', 'command_response', 'start_session', 'stop_session', 'reserve_now', 'unlock_connector', 'credentials', 'version', 'version_details', 'types']) {
      for (const v of SUPPORTED_VERSIONS) assert.ok(ids.has(schemaId(v, object)), `${v} ${object}`);
    }
  });
});

describe('2.1.1 schemas', () => {
  it('follow the hub\'s cardinality rule for OCPI objects: an optional member sent as null is absent (terminology.md, Cardinality)', () => {
    const token = { uid: '012345678', type: 'RFID', auth_id: 'DE8ACC12E46L89', visual_number: null, issuer: 'TheNewMotion', valid: true, whitelist: 'ALLOWED', language: null, last_updated: '2015-06-29T22:39:09Z' };
    const { document, violations } = validator.validate('ocpi-2.1.1/token.json', token);
    assert.deepEqual(violations, []);
    assert.equal('visual_number' in (document as object) || 'language' in (document as object), false);
    const { document: patch } = validator.validatePartial('ocpi-2.1.1/token.json', { valid: false, language: null });
    assert.deepEqual(patch, { valid: false, language: null });
  });
});

describe('the hub-private member', () => {
  it('is removed without a copy when absent, with a shallow copy when present, and the input is never changed', () => {
    const plain = { id: 'X' };
    assert.equal(withoutVersionFields(plain), plain);
    const marked = { id: 'X', nested: { a: 1 }, hub_version_fields: { '2.1.1': { kept: { type: 'OTHER' } } } };
    const stripped = withoutVersionFields(marked);
    assert.deepEqual(stripped, { id: 'X', nested: { a: 1 } });
    assert.equal(stripped.nested, marked.nested);
    assert.ok('hub_version_fields' in marked);
  });

  it('is merged one level deeper by a PATCH: kept and derived member by member, null removes, nothing left is no member', () => {
    const stored = { '2.1.1': { kept: { type: 'OTHER', location: { id: 'L' } }, derived: { publish: true } } } as const;
    assert.deepEqual(mergeVersionFields(stored, undefined), stored);
    assert.deepEqual(mergeVersionFields(stored, { '2.1.1': { kept: { type: null } } }), { '2.1.1': { kept: { location: { id: 'L' } }, derived: { publish: true } } });
    assert.equal(mergeVersionFields({ '2.1.1': { kept: { type: 'OTHER' } } }, { '2.1.1': { kept: { type: null } } }), undefined);
    assert.equal(mergeVersionFields(stored, null), undefined);
  });
});

describe('eMA-ID and the CdrToken of a 2.1.1 auth_id', () => {
  it('parses the eMI3 / ISO 15118 forms, with and without separators and check digit, in any case', () => {
    assert.deepEqual(parseEmaId('NL-TNM-C12345678-X'), { countryCode: 'NL', providerId: 'TNM', instance: 'C12345678', checkDigit: 'X' });
    assert.deepEqual(parseEmaId('NLTNMC12345678X'), { countryCode: 'NL', providerId: 'TNM', instance: 'C12345678', checkDigit: 'X' });
    assert.deepEqual(parseEmaId('NL-TNM-C12345678'), { countryCode: 'NL', providerId: 'TNM', instance: 'C12345678' });
    assert.deepEqual(parseEmaId('nltnmc12345678'), { countryCode: 'NL', providerId: 'TNM', instance: 'C12345678' });
    assert.deepEqual(parseEmaId('DE8ACC12E46L89'), { countryCode: 'DE', providerId: '8AC', instance: 'C12E46L89' });
  });

  it('refuses what is no eMA-ID: mixed separators, wrong lengths, a digit country, other characters', () => {
    for (const id of ['NL-TNMC12345678X', 'NLTNM-C12345678-X', 'NL-TNM-C1234567-X', 'NL-TNM-C123456789-XY', '12-TNM-C12345678', 'NL_TNM_C12345678_X', 'NL-TN*-C12345678', '012345678', '']) {
      assert.equal(parseEmaId(id), undefined, id);
    }
  });

  it('a known Token gives its party, uid and type; else the eMA-ID prefix, uid the auth_id and type OTHER; else unresolved', () => {
    const token = example221('token_example_2_full_rfid.json') as Token;
    assert.deepEqual(cdrTokenFromAuthId(token.contract_id, token), { how: 'token', cdrToken: { country_code: token.country_code, party_id: token.party_id, uid: token.uid, type: token.type, contract_id: token.contract_id } });
    assert.deepEqual(cdrTokenFromAuthId('NL-TNM-C12345678-X', undefined), { how: 'ema-id-prefix', cdrToken: { country_code: 'NL', party_id: 'TNM', uid: 'NL-TNM-C12345678-X', type: 'OTHER', contract_id: 'NL-TNM-C12345678-X' } });
    assert.deepEqual(cdrTokenFromAuthId('12345', undefined), { how: 'unresolved' });
    const found = cdrTokenFromAuthId('nl-tnm-c12345678-x', undefined);
    assert.ok(found.how === 'ema-id-prefix');
    assert.deepEqual(validator.validate('ocpi/cdr_token.json', found.cdrToken).violations, []);
  });
});
