// Tariff, Token, AuthorizationInfo and LocationReferences between OCPI 2.1.1 and the canonical 2.2.1 form.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { Tariff, Token } from '../src/index.ts';
import { adapterFor, isNotRepresentable } from '../src/index.ts';
import type { Ocpi211 } from '../src/index.ts';
import { assertValid, clone, DE_EMS, example211, example221, examples211, NL_ABC } from './examples.ts';

const v211 = adapterFor('2.1.1');
const examples221 = readdirSync(new URL('../../../../shared/ocpi-2.2.1/examples/', import.meta.url));

describe('Tariff', () => {
  const tariffExamples = examples211('mod_tariffs.md').filter((e) => !e.request);
  it('finds the five mod_tariffs.md 3.1 examples', () => assert.equal(tariffExamples.length, 5));

  for (const example of tariffExamples) {
    it(`2.1.1 "${example.heading}" -> canonical -> 2.1.1 as sent`, () => {
      const sent = JSON.parse(example.text) as Ocpi211.Tariff;
      assertValid('ocpi-2.1.1/tariff.json', sent);
      const canonical = v211.tariffIn(clone(sent), NL_ABC);
      assertValid('ocpi/tariff.json', canonical);
      assert.equal(canonical.country_code, 'NL');
      // mod_tariffs.md 4.2 and mod_tariffs.asciidoc 11.4.2: both excl. VAT, so the number is the same.
      assert.equal(canonical.elements[0].price_components[0].price, sent.elements[0].price_components[0].price);
      assert.deepEqual(v211.tariffOut(canonical), sent);
    });
  }

  for (const file of examples221.filter((f) => /^tariff_\d+_.*\.json$/.test(f))) {
    it(`2.2.1 ${file} -> 2.1.1 is valid`, () => {
      const canonical = example221(file) as Tariff;
      assertValid('ocpi-2.1.1/tariff.json', v211.tariffOut(canonical));
    });
  }

  it('lossy: type, min/max_price, start/end_date_time, vat, min/max_current dropped; reservation elements left out', () => {
    const base = example221('tariff_1_simple_2hour.json') as Tariff;
    const component = base.elements[0].price_components[0];
    const { vat: _vat, ...withoutVat } = component;
    const canonical: Tariff = {
      ...clone(base),
      type: 'AD_HOC_PAYMENT',
      min_price: { excl_vat: 1 },
      max_price: { excl_vat: 9 },
      start_date_time: '2026-01-01T00:00:00Z',
      elements: [
        { price_components: [{ ...component, vat: 21 }], restrictions: { min_current: 16, max_power: 11 } },
        { price_components: [component], restrictions: { reservation: 'RESERVATION' } },
      ],
    };
    const out = v211.tariffOut(canonical) as Ocpi211.Tariff;
    assertValid('ocpi-2.1.1/tariff.json', out);
    assert.deepEqual(out.elements, [{ price_components: [withoutVat], restrictions: { max_power: 11 } }]);
    for (const dropped of ['type', 'min_price', 'max_price', 'start_date_time', 'country_code', 'party_id']) assert.equal(dropped in out, false, dropped);
    assert.throws(() => v211.tariffOut({ ...canonical, elements: [canonical.elements[1] ?? canonical.elements[0]] }), isNotRepresentable);
  });
});

describe('Token', () => {
  it('the mod_tokens.md 3.2 example: auth_id is contract_id, the party is the eMSP\'s, and back as sent', () => {
    const sent = example211('mod_tokens.md', 'Example') as Ocpi211.Token;
    assertValid('ocpi-2.1.1/token.json', sent);
    const canonical = v211.tokenIn(clone(sent), DE_EMS);
    assertValid('ocpi/token.json', canonical);
    assert.equal(canonical.contract_id, sent.auth_id);
    assert.deepEqual([canonical.country_code, canonical.party_id], ['DE', 'EMS']);
    assert.deepEqual(v211.tokenOut(canonical), sent);
  });

  it('the PUT and PATCH examples (mod_tokens.md 2.2): the PATCH maps as it is, auth_id to contract_id', () => {
    const put = example211('mod_tokens.md', 'Example: put a new Token') as Ocpi211.Token;
    assertValid('ocpi-2.1.1/token.json', put);
    assertValid('ocpi/token.json', v211.tokenIn(put, DE_EMS));
    const patch = example211('mod_tokens.md', 'Example: invalidate a Token') as Record<string, unknown>;
    assert.deepEqual(v211.tokenPatchIn(patch), patch);
    assert.deepEqual(v211.tokenPatchIn({ auth_id: 'NL-TNM-C12345678-X' }), { contract_id: 'NL-TNM-C12345678-X' });
    assert.deepEqual(v211.tokenPatchOut({ contract_id: 'X1', type: 'APP_USER', group_id: 'G' }), { auth_id: 'X1', type: 'OTHER' });
  });

  for (const file of ['token_example_1_app_user.json', 'token_example_2_full_rfid.json', 'token_put_example.json']) {
    it(`2.2.1 ${file} -> 2.1.1 is valid (APP_USER/AD_HOC_USER are OTHER; group_id, default_profile_type, energy_contract dropped)`, () => {
      const canonical = example221(file) as Token;
      const out = v211.tokenOut(canonical) as Ocpi211.Token;
      assertValid('ocpi-2.1.1/token.json', out);
      assert.equal(out.type, canonical.type === 'RFID' ? 'RFID' : 'OTHER');
      assert.equal(out.auth_id, canonical.contract_id);
      for (const dropped of ['group_id', 'default_profile_type', 'energy_contract', 'contract_id']) assert.equal(dropped in out, false, dropped);
    });
  }
});

describe('AuthorizationInfo and LocationReferences', () => {
  const token = example221('token_example_2_full_rfid.json') as Token;

  it('2.1.1 -> canonical: the token asked about is added, connector_ids dropped; -> 2.1.1: token and authorization_reference dropped', () => {
    const sent: Ocpi211.AuthorizationInfo = { allowed: 'ALLOWED', location: { location_id: 'LOC1', evse_uids: ['3256'], connector_ids: ['1'] }, info: { language: 'en', text: 'Welcome' } };
    assertValid('ocpi-2.1.1/authorization_info.json', sent);
    const canonical = v211.authorizationInfoIn(clone(sent), token);
    assertValid('ocpi/authorization_info.json', canonical);
    assert.deepEqual(canonical, { allowed: 'ALLOWED', token, location: { location_id: 'LOC1', evse_uids: ['3256'] }, info: sent.info });
    const back = v211.authorizationInfoOut({ ...canonical, authorization_reference: 'REF1' });
    assertValid('ocpi-2.1.1/authorization_info.json', back);
    assert.deepEqual(back, { allowed: 'ALLOWED', location: { location_id: 'LOC1', evse_uids: ['3256'] }, info: sent.info });
  });

  it('2.2.1 and 2.3.0 answers without their required token (mod_tokens.asciidoc, AuthorizationInfo object) get the token asked about, without hub-private members; one they carry is kept', () => {
    const stored = { ...token, hub_version_fields: { '2.1.1': { kept: { x: 1 } } } } as Token;
    for (const version of ['2.2.1', '2.3.0'] as const) {
      const filled = adapterFor(version).authorizationInfoIn({ allowed: 'BLOCKED' }, stored);
      assertValid('ocpi/authorization_info.json', filled);
      assert.deepEqual(filled, { allowed: 'BLOCKED', token }, version);
      const carried = { ...token, uid: 'OTHER' };
      assert.equal(adapterFor(version).authorizationInfoIn({ allowed: 'ALLOWED', token: carried }, stored).token.uid, 'OTHER', version);
    }
    // A 2.1.1 caller needs no token: none is looked up, the 2.1.1 form has none.
    assertValid('ocpi-2.1.1/authorization_info.json', v211.authorizationInfoOut(adapterFor('2.2.1').authorizationInfoIn({ allowed: 'ALLOWED' }, undefined)));
  });

  it('every Allowed value is the same AllowedType', () => {
    for (const allowed of ['ALLOWED', 'BLOCKED', 'EXPIRED', 'NO_CREDIT', 'NOT_ALLOWED'] as const) {
      assertValid('ocpi/authorization_info.json', v211.authorizationInfoIn({ allowed }, token));
    }
  });

  it('LocationReferences: the body a 2.1.1 CPO POSTs to authorize loses connector_ids; 2.2.1 ones are valid 2.1.1', () => {
    const sent: Ocpi211.LocationReferences = { location_id: 'LOC1', evse_uids: ['3256'], connector_ids: ['1', '2'] };
    assertValid('ocpi-2.1.1/location_references.json', sent);
    assert.deepEqual(v211.locationReferencesIn(sent), { location_id: 'LOC1', evse_uids: ['3256'] });
    assertValid('ocpi-2.1.1/location_references.json', v211.locationReferencesOut({ location_id: 'LOC1', evse_uids: ['3256'] }));
  });
});
