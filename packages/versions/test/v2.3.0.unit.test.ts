// The OCPI 2.3.0 adapter: the specification's examples to the canonical 2.2.1 form and back, the prices
// and taxes rule (src/v2.3.0/prices.ts), 2.3.0-only fields and extensions kept for 2.3.0 readers only.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { describeViolations } from '@hub/schemas';
import { adapterFor, isNotRepresentable, mergeVersionFields, priceIn, priceOut, v230, withoutVersionFields, type Credentials, type Tariff } from '../src/index.ts';
import { validator } from './examples.ts';

const dir = '/work/shared/ocpi-2.3.0/examples/';
const owner = { countryCode: 'BE', partyId: 'BEC' };
const read = (file: string): Record<string, unknown> => {
  const { document, violations } = validator.validate(`ocpi-2.3.0/${file.split('_')[0]}.json`, JSON.parse(readFileSync(dir + file, 'utf8')));
  assert.deepEqual(violations, [], describeViolations(violations));
  return document as Record<string, unknown>;
};
const valid = (schema: string, body: unknown): void => {
  const { violations } = validator.validate(schema, body);
  assert.deepEqual(violations, [], `${schema}: ${describeViolations(violations)}`);
};
const CDR_TOKEN = { country_code: 'BE', party_id: 'BEC', uid: '1', type: 'RFID' as const, contract_id: 'BE-BEC-C1' };

describe('v2.3.0: the specification examples, in and out', () => {
  const files = readdirSync(dir).filter((f) => /^(location_example|session_example|tariff_\d|token_example|token_put)/.test(f)).sort();
  for (const file of files) {
    it(`${file}: the canonical object is a strict 2.2.1 one, and a 2.3.0 reader gets the example back`, () => {
      const sent = read(file);
      const object = file.split('_')[0] as 'location' | 'session' | 'tariff' | 'token';
      const canonical = object === 'location' ? v230.locationIn(sent, owner) : object === 'session' ? v230.sessionIn(sent, owner, CDR_TOKEN) : object === 'tariff' ? v230.tariffIn(sent, owner) : v230.tokenIn(sent, owner);
      const out221 = (): unknown => (object === 'location' ? adapterFor('2.2.1').locationOut(canonical as never) : object === 'session' ? adapterFor('2.2.1').sessionOut(canonical as never, undefined) : object === 'tariff' ? adapterFor('2.2.1').tariffOut(canonical as never) : adapterFor('2.2.1').tokenOut(canonical as never));
      // tariff_20: North American, prices incl. taxes and no vat: no excl. price for 2.2.1 without inventing one.
      if (file === 'tariff_20_simple_north_american_inclusive.json') assert.throws(out221, isNotRepresentable);
      else valid(`ocpi/${object}.json`, out221());
      const back = object === 'location' ? v230.locationOut(canonical as never) : object === 'session' ? v230.sessionOut(canonical as never, undefined) : object === 'tariff' ? v230.tariffOut(canonical as never) : v230.tokenOut(canonical as never);
      assert.deepEqual(back, sent);
    });
  }
});

describe('v2.3.0: prices and taxes (docs/reference/version-mapping.md, OCPI 2.3.0)', () => {
  it('a taxes list reduces to incl_vat = before_taxes + every amount, and comes back as sent', () => {
    const canadian = { before_taxes: 10, taxes: [{ name: 'GST', percentage: 5, amount: 0.5 }, { name: 'QST', percentage: 9.975, amount: 0.9975 }] };
    assert.deepEqual(priceIn(canadian), { excl_vat: 10, incl_vat: 11.4975 });
    assert.deepEqual(priceOut(priceIn(canadian), canadian.taxes), canadian);
  });
  it('no taxes list is no incl_vat (nothing invented); an empty list is no tax', () => {
    assert.deepEqual(priceIn({ before_taxes: 3 }), { excl_vat: 3 });
    assert.deepEqual(priceIn({ before_taxes: 3, taxes: [] }), { excl_vat: 3, incl_vat: 3 });
    assert.deepEqual(priceOut({ excl_vat: 3 }), { before_taxes: 3 });
  });
  it('a 2.2.1 price is one tax named VAT, its amount the difference, no percentage', () => {
    assert.deepEqual(priceOut({ excl_vat: 8, incl_vat: 9.68 }), { before_taxes: 8, taxes: [{ name: 'VAT', amount: 1.68 }] });
  });
  it('a kept list no longer matching the canonical amounts is not given back', () => {
    assert.deepEqual(priceOut({ excl_vat: 12, incl_vat: 14.52 }, [{ name: 'VAT', percentage: 21, amount: 2.1 }]), { before_taxes: 12, taxes: [{ name: 'VAT', amount: 2.52 }] });
  });
  it('CDR totals keep their meaning: each total of a 2.3.0 CDR reaches a 2.2.1 reader as excl/incl and a 2.3.0 reader as sent', () => {
    // cdr_example.json is defective (its tariff has no tax_included, schemas/test/ocpi-2.3.0-examples.unit.test.ts): completed here.
    const raw = JSON.parse(readFileSync(`${dir}cdr_example.json`, 'utf8')) as { tariffs: Array<Record<string, unknown>> };
    for (const t of raw.tariffs) t['tax_included'] = 'NO';
    const cdr = validator.validate('ocpi-2.3.0/cdr.json', raw).document as Record<string, unknown>;
    valid('ocpi-2.3.0/cdr.json', cdr);
    const canonical = v230.cdrIn(cdr, owner, CDR_TOKEN);
    const for221 = adapterFor('2.2.1').cdrOut(canonical) as Record<string, unknown>;
    valid('ocpi/cdr.json', for221);
    const total = cdr['total_cost'] as { before_taxes: number; taxes?: Array<{ amount: number }> };
    assert.equal((for221['total_cost'] as { excl_vat: number }).excl_vat, total.before_taxes);
    assert.deepEqual(v230.cdrOut(canonical), cdr);
  });
  it('a 2.2.1 CDR to a 2.3.0 reader: a strict 2.3.0 CDR, its tariffs saying NO (2.2.1 prices are excl. VAT)', () => {
    const cdr = JSON.parse(readFileSync('/work/shared/ocpi-2.2.1/examples/cdr_example.json', 'utf8')) as Record<string, unknown>;
    const out = v230.cdrOut(cdr as never) as Record<string, unknown>;
    valid('ocpi-2.3.0/cdr.json', out);
    assert.equal((out['tariffs'] as Array<{ tax_included: string }>)[0]?.tax_included, 'NO');
  });
  it('a CDR Tariff with tax_included YES and no vat is withheld from 2.2.1 and 2.1.1 readers and kept whole for 2.3.0 ones', () => {
    const raw = JSON.parse(readFileSync(`${dir}cdr_example.json`, 'utf8')) as { tariffs: Array<Record<string, unknown>> };
    const exclusive = { ...raw.tariffs[0], tax_included: 'NO' };
    const inclusive = { ...read('tariff_20_simple_north_american_inclusive.json'), country_code: 'BE', party_id: 'BEC' };
    const cdr = validator.validate('ocpi-2.3.0/cdr.json', { ...raw, tariffs: [exclusive, inclusive] }).document as Record<string, unknown>;
    valid('ocpi-2.3.0/cdr.json', cdr);
    const canonical = v230.cdrIn(cdr, owner, CDR_TOKEN);
    for (const version of ['2.2.1', '2.1.1'] as const) {
      const out = adapterFor(version).cdrOut(canonical, v230.locationIn(read('location_example.json'), owner)) as Record<string, unknown>;
      const tariffs = (out['tariffs'] ?? []) as Array<Record<string, unknown>>;
      assert.deepEqual(tariffs.map((t) => t['id']), ['12'], version);
      assert.ok(!JSON.stringify(out).includes('withheld'), version);
    }
    valid('ocpi/cdr.json', withoutVersionFields(canonical));
    assert.deepEqual(v230.cdrOut(canonical), cdr);
    const onlyInclusive = v230.cdrIn({ ...cdr, tariffs: [inclusive] }, owner, CDR_TOKEN);
    assert.ok(!('tariffs' in onlyInclusive));
    assert.deepEqual(v230.cdrOut(onlyInclusive), { ...cdr, tariffs: [inclusive] });
  });
  it("a 2.3.0 AuthorizationInfo's Token reaches a 2.2.1 caller without members 2.2.1 lacks", () => {
    const token = { ...read('token_example_2_full_rfid.json'), x_loyalty: 'gold' };
    const info = v230.authorizationInfoIn({ allowed: 'ALLOWED', token }, token as never);
    const out = adapterFor('2.2.1').authorizationInfoOut(info);
    valid('ocpi/authorization_info.json', out);
    assert.ok(!JSON.stringify(out).includes('x_loyalty'));
  });
  it('the Token of a 2.3.0 StartSession or ReserveNow reaches a 2.2.1 or 2.1.1 CPO without members 2.2.1 lacks', () => {
    const token = { ...read('token_example_2_full_rfid.json'), x_loyalty: 'gold' };
    const start = { response_url: 'https://emsp.example.com/r/1', token, location_id: 'LOC1', evse_uid: '3256' };
    valid('ocpi-2.3.0/start_session.json', start);
    const canonical = v230.startSessionIn(start, { countryCode: 'DE', partyId: 'TNM' });
    valid('ocpi/start_session.json', adapterFor('2.2.1').startSessionOut(canonical));
    assert.ok(!JSON.stringify(adapterFor('2.1.1').startSessionOut(canonical)).includes('x_loyalty'));
    const reserve = { response_url: 'https://emsp.example.com/r/2', token, expiry_date: '2026-01-01T00:00:00Z', reservation_id: '7', location_id: 'LOC1' };
    valid('ocpi/reserve_now.json', adapterFor('2.2.1').reserveNowOut(v230.reserveNowIn(reserve, { countryCode: 'DE', partyId: 'TNM' })));
  });
  it('tax_included YES with vat: 2.2.1 gets the price without it; without vat: no 2.2.1 or 2.1.1 form', () => {
    const tariff = { country_code: 'BE', party_id: 'BEC', id: 't1', currency: 'EUR', tax_included: 'YES', elements: [{ price_components: [{ type: 'ENERGY', price: 0.242, vat: 21, step_size: 1 }] }], last_updated: '2026-01-01T00:00:00Z' };
    valid('ocpi-2.3.0/tariff.json', tariff);
    const canonical = v230.tariffIn(tariff, owner);
    assert.equal((adapterFor('2.2.1').tariffOut(canonical) as Tariff).elements[0].price_components[0].price, 0.2);
    assert.deepEqual(v230.tariffOut(canonical), tariff);
    const american = { ...tariff, currency: 'USD', elements: [{ price_components: [{ type: 'ENERGY', price: 0.3, step_size: 1 }] }] };
    const noRate = v230.tariffIn(american, owner);
    assert.throws(() => adapterFor('2.2.1').tariffOut(noRate), isNotRepresentable);
    assert.throws(() => adapterFor('2.1.1').tariffOut(noRate), isNotRepresentable);
    assert.deepEqual(v230.tariffOut(noRate), american);
  });
});

describe('v2.3.0: new fields and extensions travel to 2.3.0 readers only', () => {
  const location = read('location_example.json');
  const evse = (location['evses'] as Array<Record<string, unknown>>)[0] ?? {};
  const rich = {
    ...location, help_phone: '+3225551234', vendor_rating: 4,
    parking_places: [{ id: 'P1', vehicle_types: ['PERSONAL_VEHICLE', 'CARGO_BIKE'], restricted_to_type: false, reservation_required: false }],
    evses: [{ ...evse, parking: [{ parking_id: 'P1', evse_position: 'LEFT' }], accepted_service_providers: ['Shell Recharge'], capabilities: ['RFID_READER', 'SOLAR_BOOST'],
      connectors: (evse['connectors'] as Array<Record<string, unknown>>).map((c) => ({ ...c, capabilities: ['ISO_15118_2_PLUG_AND_CHARGE'] })) }],
  };
  it('a 2.3.0 Location with them is valid 2.3.0, strict 2.2.1 and 2.1.1 for older readers, and whole for 2.3.0 readers', () => {
    valid('ocpi-2.3.0/location.json', rich);
    const canonical = v230.locationIn(rich, owner);
    const for221 = adapterFor('2.2.1').locationOut(canonical) as Record<string, unknown>;
    valid('ocpi/location.json', for221);
    assert.equal(for221['help_phone'], undefined);
    assert.deepEqual((for221['evses'] as Array<{ capabilities: string[] }>)[0]?.capabilities, ['RFID_READER']);
    valid('ocpi-2.1.1/location.json', adapterFor('2.1.1').locationOut(canonical));
    assert.deepEqual(v230.locationOut(canonical), rich);
  });
  it('a Location from an older party to a 2.3.0 reader: valid 2.3.0, the new fields left out', () => {
    const out = v230.locationOut(withoutVersionFields(v230.locationIn(location, owner))) as Record<string, unknown>;
    valid('ocpi-2.3.0/location.json', out);
    assert.equal(out['help_phone'], undefined);
  });
  it('a 2.3.0 EVSE PATCH with parking reaches a 2.2.1 reader without it and a 2.3.0 reader with it', () => {
    const patch = { parking: [{ parking_id: 'P2' }], status: 'CHARGING', last_updated: '2026-01-01T00:00:00Z' };
    assert.deepEqual(validator.validatePartial('ocpi-2.3.0/evse.json', patch).violations, []);
    const canonical = v230.evsePatchIn(patch);
    const for221 = adapterFor('2.2.1').evsePatchOut(canonical);
    assert.deepEqual(validator.validatePartial('ocpi/evse.json', for221).violations, []);
    assert.deepEqual(for221, { status: 'CHARGING', last_updated: '2026-01-01T00:00:00Z' });
    assert.deepEqual(v230.evsePatchOut(canonical), patch);
  });
  it('an open-enum value 2.2.1 has no value for, in a required field, is refused as an OCPI error', () => {
    const connector = (evse['connectors'] as Array<Record<string, unknown>>)[0];
    assert.throws(() => v230.connectorIn({ ...connector, standard: 'MCS' }), /2001|INVALID_PARAMETERS|connector standard/);
  });
  it('a standalone 2.3.0 EVSE keeps its parking for 2.3.0 and gives 2.1.1 none of the hub-private member', () => {
    const sent = rich.evses[0];
    const canonical = v230.evseIn(sent);
    assert.deepEqual(v230.evseOut(canonical), sent);
    assert.equal('hub_version_fields' in adapterFor('2.1.1').evseOut(canonical), false);
  });
});

describe('v2.3.0: a cdr_token of a type 2.2.1 has not (EMAID)', () => {
  it('is OTHER in the canonical Session and CDR, EMAID again for a 2.3.0 reader; a PATCH with another token removes the kept one', () => {
    const session = { ...read('session_example_1_simple_start.json'), cdr_token: { ...CDR_TOKEN, type: 'EMAID' } };
    const canonical = v230.sessionIn(session, owner, CDR_TOKEN);
    valid('ocpi/session.json', withoutVersionFields(canonical));
    assert.equal(canonical.cdr_token.type, 'OTHER');
    assert.equal(((v230.sessionOut(canonical, undefined) as Record<string, unknown>)['cdr_token'] as { type: string }).type, 'EMAID');
    const patch = v230.sessionPatchIn({ cdr_token: CDR_TOKEN, last_updated: '2030-01-01T00:00:00Z' });
    const merged = mergeVersionFields(canonical.hub_version_fields, patch.hub_version_fields);
    assert.equal(merged?.['2.3.0']?.kept?.['cdr_token'], undefined);
    assert.equal(((v230.sessionPatchOut(patch) as Record<string, unknown>)['cdr_token'] as { type: string }).type, 'RFID');
  });
});

describe('v2.3.0: a PATCH replaces what was kept of the members it carries', () => {
  it('a Location PATCH of facilities with 2.2.1 values only removes the kept list, and a 2.3.0 reader of the PATCH gets the values sent', () => {
    const kept = v230.locationIn({ ...read('location_example.json'), facilities: ['WIFI', 'EV_LOUNGE'] }, owner);
    assert.deepEqual(kept.hub_version_fields?.['2.3.0']?.kept?.['facilities'], ['WIFI', 'EV_LOUNGE']);
    const patch = v230.locationPatchIn({ facilities: ['WIFI'], last_updated: '2030-01-01T00:00:00Z' });
    assert.equal(patch.hub_version_fields?.['2.3.0']?.kept?.['facilities'], null);
    assert.deepEqual(mergeVersionFields(kept.hub_version_fields, patch.hub_version_fields)?.['2.3.0']?.kept?.['facilities'], undefined);
    assert.deepEqual((v230.locationPatchOut(patch) as Record<string, unknown>)['facilities'], ['WIFI']);
    // A PATCH of the EVSE list removes what was kept of the EVSEs before, keeping the new ones'.
    const evses = v230.locationPatchIn({ evses: [{ ...((read('location_example.json')['evses'] as unknown[])[0] as object), parking: [] }], last_updated: '2030-01-01T00:00:00Z' });
    const merged = mergeVersionFields(kept.hub_version_fields, evses.hub_version_fields)?.['2.3.0']?.kept ?? {};
    assert.deepEqual(Object.keys(merged).filter((k) => k.startsWith('evses.')), ['evses.3256.parking']);
    assert.deepEqual(merged['evses.3256.parking'], []);
  });

  it('a help_phone: null (a 2.3.0-only member removed) still reaches a 2.3.0 reader of the PATCH as null', () => {
    const patch = v230.locationPatchIn({ help_phone: null, last_updated: '2030-01-01T00:00:00Z' });
    assert.equal((v230.locationPatchOut(patch) as Record<string, unknown>)['help_phone'], null);
  });
});

describe('v2.3.0: the hub-private member', () => {
  it('a 2.3.0 partner cannot set hub_version_fields, though 2.3.0 tolerates unknown members', () => {
    const forged = { hub_version_fields: { '2.3.0': { kept: { help_phone: '0900-FORGED' } } } };
    assert.deepEqual(validator.validate('ocpi-2.3.0/token.json', { ...read('token_put_example.json'), ...forged }).violations, []);
    const token = v230.tokenIn({ ...read('token_put_example.json'), ...forged }, owner);
    assert.equal('hub_version_fields' in token, false);
    const location = v230.locationIn({ ...read('location_example.json'), ...forged }, owner) as { hub_version_fields?: unknown };
    assert.equal(JSON.stringify(location.hub_version_fields ?? {}).includes('FORGED'), false);
    const command = v230.stopSessionIn({ response_url: 'https://emsp.example/r', session_id: 's1', ...forged });
    assert.equal('hub_version_fields' in command, false);
  });
});

describe('v2.3.0: Credentials (credentials.asciidoc Credentials object)', () => {
  it("the hub's Credentials name it in hub_party_id and list the reachable parties, no HUB role", () => {
    const hub = { token: 'abc', url: 'https://hub.example/ocpi/versions', roles: [
      { role: 'HUB', country_code: 'NL', party_id: 'HUB', business_details: { name: 'Hub' } },
      { role: 'CPO', country_code: 'BE', party_id: 'BEC', business_details: { name: 'CPO' } },
    ] } as unknown as Credentials;
    const out = v230.credentialsOut(hub) as { hub_party_id: string; roles: Array<{ role: string }> };
    valid('ocpi-2.3.0/credentials.json', out);
    assert.equal(out.hub_party_id, 'NLHUB');
    assert.deepEqual(out.roles.map((r) => r.role), ['CPO']);
  });
  it('with no party reachable yet, the hub lists its own party as OTHER (roles is one or more)', () => {
    const hub = { token: 'abc', url: 'https://hub.example/ocpi/versions', roles: [{ role: 'HUB', country_code: 'NL', party_id: 'HUB', business_details: { name: 'Hub' } }] } as unknown as Credentials;
    const out = v230.credentialsOut(hub) as { hub_party_id: string; roles: Array<Record<string, unknown>> };
    valid('ocpi-2.3.0/credentials.json', out);
    assert.equal(out.hub_party_id, 'NLHUB');
    assert.deepEqual(out.roles, [{ role: 'OTHER', country_code: 'NL', party_id: 'HUB', business_details: { name: 'Hub' } }]);
  });
  it("a partner's hub_party_id is kept, not a member of the canonical Credentials", () => {
    const body = { token: 'abc', url: 'https://p.example/versions', hub_party_id: 'DEHBX', roles: [{ role: 'EMSP', country_code: 'DE', party_id: 'ABC', business_details: { name: 'E' } }] };
    const canonical = v230.credentialsIn(body, 'EMSP') as Credentials & { hub_version_fields?: Record<string, { kept: Record<string, unknown> }> };
    assert.ok(!('hub_party_id' in canonical));
    assert.deepEqual(canonical.roles, body.roles);
    assert.equal(canonical.hub_version_fields?.['2.3.0']?.kept['hub_party_id'], 'DEHBX');
  });
});
