// Drivers' personal data in events (docs/decisions/0013-erasure-by-destroying-data-keys.md): sealed
// under the token's data key, opened with it, and read as the placeholder without it, every other
// field untouched.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { ERASED_PLACEHOLDER, driverDataKeyring, erasePersonalFields, openPersonalFields, sealPersonalFields } from '../src/driver-data.ts';

const cdr = {
  country_code: 'NL', party_id: 'CPO', id: 'CDR-1',
  cdr_token: { country_code: 'DE', party_id: 'EMS', uid: 'DRIVER-UID-1', type: 'RFID', contract_id: 'DE-EMS-C12345678-X' },
  hub_version_fields: { '2.1.1': { kept: { auth_id: 'DE-EMS-C12345678-X' } } },
  total_cost: { excl_vat: 12.5 }, total_energy: 30.25, total_time: 1.5,
};
const token = { country_code: 'DE', party_id: 'EMS', uid: 'DRIVER-UID-1', type: 'RFID', contract_id: 'DE-EMS-C12345678-X', visual_number: '1234 5678', group_id: 'FAMILY-9', issuer: 'EMS GmbH', valid: true, energy_contract: { supplier_name: 'Green', contract_id: 'EC-42' } };

describe('personal fields of a driver', () => {
  const key = randomBytes(32);
  const keyId = '7f7c3f0e-2b1a-4c8e-9d2f-0a1b2c3d4e5f';

  it('a sealed CDR holds no personal value, opens to the CDR as posted, and keeps every total', () => {
    const { object, sealed } = sealPersonalFields('cdr', cdr, key, keyId);
    const text = JSON.stringify(object) + (sealed ?? '');
    for (const plain of ['DRIVER-UID-1', 'DE-EMS-C12345678-X']) assert.ok(!text.includes(plain), `${plain} in the sealed event`);
    assert.equal(object.cdr_token.uid, keyId);
    assert.equal(object.total_energy, 30.25);
    assert.deepEqual(Object.keys(object), Object.keys(cdr), 'no member added to the OCPI object');
    assert.ok(sealed?.startsWith(`${keyId}.`));
    assert.deepEqual(openPersonalFields('cdr', object, sealed, key), cdr);
  });

  it('without the key every sealed field reads as the placeholder, the rest as posted', () => {
    const { object, sealed } = sealPersonalFields('cdr', cdr, key, keyId);
    const opened = openPersonalFields('cdr', object, sealed, undefined);
    assert.deepEqual(opened, { ...cdr, cdr_token: { ...cdr.cdr_token, uid: ERASED_PLACEHOLDER, contract_id: ERASED_PLACEHOLDER }, hub_version_fields: { '2.1.1': { kept: { auth_id: ERASED_PLACEHOLDER } } } });
  });

  it('a token: uid, visual_number, contract_id, group_id and the energy contract id are covered', () => {
    const { object, sealed } = sealPersonalFields('token', token, key, keyId);
    for (const plain of ['DRIVER-UID-1', 'DE-EMS-C12345678-X', '1234 5678', 'FAMILY-9', 'EC-42']) assert.ok(!(JSON.stringify(object) + (sealed ?? '')).includes(plain), plain);
    assert.equal(object.issuer, 'EMS GmbH');
    assert.deepEqual(openPersonalFields('token', object, sealed, key), token);
    assert.deepEqual(erasePersonalFields('token', token), { ...token, uid: 'ERASED', contract_id: 'ERASED', visual_number: 'ERASED', group_id: 'ERASED', energy_contract: { supplier_name: 'Green', contract_id: 'ERASED' } });
  });

  it("a command request: the Token of START_SESSION is covered, the command's other fields are not", () => {
    const command = { command: 'START_SESSION', request: { response_url: 'https://emsp.example.com/r/1', token, location_id: 'LOC1', evse_uid: 'EVSE-1' } };
    const { object, sealed } = sealPersonalFields('command', command, key, keyId);
    for (const plain of ['DRIVER-UID-1', 'DE-EMS-C12345678-X', '1234 5678', 'FAMILY-9', 'EC-42']) assert.ok(!(JSON.stringify(object) + (sealed ?? '')).includes(plain), plain);
    assert.equal(object.request.location_id, 'LOC1');
    assert.deepEqual(openPersonalFields('command', object, sealed, key), command);
    assert.equal(openPersonalFields('command', object, sealed, undefined).request.token.uid, ERASED_PLACEHOLDER);
  });

  it('another data key does not open it (GCM refuses instead of showing garbage)', () => {
    const { object, sealed } = sealPersonalFields('cdr', cdr, key, keyId);
    assert.throws(() => openPersonalFields('cdr', object, sealed, randomBytes(32)));
  });

  it('an event without sealed fields (written before sealing) reads as it is', () => {
    assert.equal(openPersonalFields('cdr', cdr, undefined, undefined), cdr);
  });
});

describe('driverDataKeyring', () => {
  const secret = randomBytes(32);
  it('wraps a data key that only the same HUB_SECRET_KEY unwraps', () => {
    const { plain, wrapped } = driverDataKeyring(secret).newDataKey();
    assert.deepEqual(driverDataKeyring(Buffer.from(secret)).unwrap(wrapped), plain);
    assert.ok(!wrapped.wrapped.includes(plain));
    assert.throws(() => driverDataKeyring(randomBytes(32)).unwrap(wrapped));
  });
  it('finds a token by a keyed hash: case-insensitive, type-sensitive, no uid in it', () => {
    const ring = driverDataKeyring(secret);
    const a = ring.tokenRef({ countryCode: 'de', partyId: 'ems', uid: 'abc', type: 'RFID' });
    assert.deepEqual(a, ring.tokenRef({ countryCode: 'DE', partyId: 'EMS', uid: 'ABC', type: 'rfid' }));
    assert.notDeepEqual(a, ring.tokenRef({ countryCode: 'DE', partyId: 'EMS', uid: 'ABC', type: 'APP_USER' }));
    assert.notDeepEqual(a, driverDataKeyring(randomBytes(32)).tokenRef({ countryCode: 'DE', partyId: 'EMS', uid: 'ABC', type: 'RFID' }));
  });
});
