// Session and CDR between OCPI 2.1.1 and the canonical 2.2.1 form.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Cdr, CdrToken, Location, Session } from '../src/index.ts';
import { adapterFor, cdrTokenFromAuthId, isNotRepresentable, isOcpiVersion } from '../src/index.ts';
import type { Ocpi211 } from '../src/index.ts';
import { mergeSessionPatch } from '@hub/core';
import { assertValid, clone, example211, example221, examples211, NL_ABC, refusedAt } from './examples.ts';

const v211 = adapterFor('2.1.1');

/**
 * The mod_sessions.md 3.1 examples write the Location's country as "BE", where mod_locations.md 3.1
 * wants ISO 3166-1 alpha-3 ("BEL"); the tests use them with that one repair.
 */
function session211(heading: string): Ocpi211.Session {
  const sent = example211('mod_sessions.md', heading) as Ocpi211.Session;
  assert.deepEqual(refusedAt('ocpi-2.1.1/session.json', sent), ['/location/country']);
  return { ...sent, location: { ...sent.location, country: 'BEL' } };
}

/**
 * The mod_cdrs.md 3.1 example is no JSON as printed (a comma after the last member of a tariff element)
 * and, beyond the country "BE" (alpha-3 wanted), gives a price as the string "2.00": the tests use it
 * repaired, and check that exactly these three repairs are needed.
 */
function cdr211(): Ocpi211.Cdr {
  const printed = examples211('mod_cdrs.md').find((e) => e.heading === 'Example of a CDR')?.text ?? '';
  assert.throws(() => JSON.parse(printed) as unknown, SyntaxError);
  const json = printed.replace(/}],\s*}\],/, '}]\n}],');
  const parsed = JSON.parse(json) as Ocpi211.Cdr;
  assert.deepEqual(refusedAt('ocpi-2.1.1/cdr.json', parsed).sort(), ['/location/country', '/tariffs/0/elements/0/price_components/0/price']);
  const repaired = JSON.parse(json.replace('"country": "BE"', '"country": "BEL"').replace('"price": "2.00"', '"price": 2.00')) as Ocpi211.Cdr;
  assertValid('ocpi-2.1.1/cdr.json', repaired);
  return repaired;
}

const token = (authId: string): CdrToken => {
  const found = cdrTokenFromAuthId(authId, undefined);
  if (found.how !== 'ema-id-prefix') assert.fail(`${authId}: ${found.how}`);
  return found.cdrToken;
};

describe('Session', () => {
  for (const heading of ['Simple Session example of a just starting session', 'Simple Session example of a short finished session']) {
    it(`2.1.1 "${heading}" -> canonical -> 2.1.1 as sent`, () => {
      const sent = session211(heading);
      assertValid('ocpi-2.1.1/session.json', sent);
      const canonical = v211.sessionIn(clone(sent), NL_ABC, token(sent.auth_id));
      assertValid('ocpi/session.json', canonical);
      assert.deepEqual([canonical.location_id, canonical.evse_uid, canonical.connector_id], ['LOC1', '3256', '1']);
      assert.equal(canonical.start_date_time, sent.start_datetime);
      assert.equal(canonical.end_date_time, sent.end_datetime);
      // mod_sessions.md 3.1: total_cost is excluding VAT.
      assert.deepEqual(canonical.total_cost, { excl_vat: sent.total_cost });
      assert.deepEqual(canonical.cdr_token, { country_code: 'DE', party_id: '8AC', uid: 'DE8ACC12E46L89', type: 'OTHER', contract_id: 'DE8ACC12E46L89' });
      assert.deepEqual(v211.sessionOut(canonical, undefined), sent);
    });
  }

  it('a session from 2.2.1 gets the read model\'s Location with only its EVSE and connector; without one it is not representable', () => {
    const canonical = example221('session_example_2_short_finished.json') as Session;
    const location = clone(example221('location_example.json') as Location);
    const evse = location.evses?.[0];
    const connector = evse?.connectors[0];
    assert.ok(evse && connector);
    const session = { ...clone(canonical), location_id: location.id, evse_uid: evse.uid, connector_id: connector.id };
    const out = v211.sessionOut(session, location) as Ocpi211.Session;
    assertValid('ocpi-2.1.1/session.json', out);
    assert.equal(out.location.evses?.length, 1);
    assert.equal(out.location.evses?.[0]?.connectors.length, 1);
    assert.equal(out.auth_id, canonical.cdr_token.contract_id);
    assert.equal(out.total_cost, canonical.total_cost?.excl_vat);
    assert.throws(() => v211.sessionOut(session, undefined), isNotRepresentable);
    assert.throws(() => v211.sessionOut({ ...session, evse_uid: 'NOPE' }, location), isNotRepresentable);
  });

  it('lossy: COMMAND is AUTH_REQUEST, RESERVATION is PENDING, 2.2.1-only dimensions and empty periods are left out', () => {
    const base = example221('session_example_1_simple_start.json') as Session;
    const location = example221('location_example.json') as Location;
    const evse = location.evses?.[0];
    const session: Session = {
      ...clone(base), location_id: location.id, evse_uid: evse?.uid ?? '', connector_id: evse?.connectors[0].id ?? '', auth_method: 'COMMAND', status: 'RESERVATION', authorization_reference: 'REF1', total_cost: { excl_vat: 2, incl_vat: 2.42 },
      charging_periods: [{ start_date_time: '2026-01-01T00:00:00Z', dimensions: [{ type: 'ENERGY', volume: 1 }, { type: 'STATE_OF_CHARGE', volume: 40 }] }, { start_date_time: '2026-01-01T00:10:00Z', dimensions: [{ type: 'POWER', volume: 11 }] }],
    };
    const out = v211.sessionOut(session, location) as Ocpi211.Session;
    assertValid('ocpi-2.1.1/session.json', out);
    assert.equal(out.auth_method, 'AUTH_REQUEST');
    assert.equal(out.status, 'PENDING');
    assert.equal(out.total_cost, 2);
    assert.equal('authorization_reference' in out || 'cdr_token' in out || 'location_id' in out, false);
    assert.deepEqual(out.charging_periods, [{ start_date_time: '2026-01-01T00:00:00Z', dimensions: [{ type: 'ENERGY', volume: 1 }] }]);
  });

  it('lossy: a FLAT dimension (no 2.2.1 value) is left out of the canonical periods and kept as sent for 2.1.1', () => {
    const sent = session211('Simple Session example of a short finished session');
    sent.charging_periods = [{ start_date_time: '2015-06-29T22:39:09Z', dimensions: [{ type: 'FLAT', volume: 1 }, { type: 'ENERGY', volume: 120 }] }, { start_date_time: '2015-06-29T22:40:09Z', dimensions: [{ type: 'FLAT', volume: 1 }] }];
    const canonical = v211.sessionIn(clone(sent), NL_ABC, token(sent.auth_id));
    assertValid('ocpi/session.json', canonical);
    assert.deepEqual(canonical.charging_periods, [{ start_date_time: '2015-06-29T22:39:09Z', dimensions: [{ type: 'ENERGY', volume: 120 }] }]);
    assert.deepEqual(v211.sessionOut(canonical, undefined), sent);
  });

  it('the total_cost PATCH (mod_sessions.md 2.2) is a Price excl. VAT; end_datetime and location map too', () => {
    const patch = example211('mod_sessions.md', 'Example: update the total cost') as Record<string, unknown>;
    const canonical = v211.sessionPatchIn(patch);
    assert.deepEqual(canonical, { total_cost: { excl_vat: 0.6 } });
    assertValid('ocpi/session.json', canonical, true);
    assert.deepEqual(v211.sessionPatchOut(canonical), { total_cost: 0.6 });
    const location = session211('Simple Session example of a just starting session').location;
    const moved = v211.sessionPatchIn({ end_datetime: '2015-06-29T23:50:16Z', location, auth_id: 'DE8ACC12E46L89' }, token('DE8ACC12E46L89'));
    assert.deepEqual({ ...moved, hub_version_fields: undefined }, { end_date_time: '2015-06-29T23:50:16Z', location_id: 'LOC1', evse_uid: '3256', connector_id: '1', cdr_token: token('DE8ACC12E46L89'), hub_version_fields: undefined });
    assertValid('ocpi/session.json', moved, true);
    assert.deepEqual(v211.sessionPatchOut(moved), { end_datetime: '2015-06-29T23:50:16Z', location, auth_id: 'DE8ACC12E46L89' });
  });

  it("a 2.1.1 PATCH's charging_periods replace the list (mod_sessions.md 2.2.3), a 2.2.1 one's are added (mod_sessions.asciidoc, PATCH Method)", () => {
    const sent = session211('Simple Session example of a short finished session');
    const p1 = { start_date_time: '2015-06-29T22:39:09Z', dimensions: [{ type: 'ENERGY' as const, volume: 1 }] };
    const p2 = { start_date_time: '2015-06-29T22:40:09Z', dimensions: [{ type: 'ENERGY' as const, volume: 2 }] };
    const stored = v211.sessionIn(clone({ ...sent, charging_periods: [p1] }), NL_ABC, token(sent.auth_id)) as unknown as Record<string, unknown>;
    // A 2.1.1 CPO re-sending the whole list: P1 is not counted twice.
    const whole = mergeSessionPatch(stored, v211.sessionPatchIn({ charging_periods: [p1, p2] }));
    assert.deepEqual(whole['charging_periods'], [p1, p2]);
    // A lossy list (FLAT) replaces the kept 2.1.1 copy and the canonical list alike: both readers see the same periods.
    const flat = { start_date_time: '2015-06-29T22:41:09Z', dimensions: [{ type: 'ENERGY' as const, volume: 3 }, { type: 'FLAT' as const, volume: 1 }] };
    const lossy = mergeSessionPatch(whole, v211.sessionPatchIn({ charging_periods: [p1, p2, flat] }));
    assert.deepEqual((lossy['charging_periods'] as unknown[]).length, 3);
    assert.deepEqual((v211.sessionOut(lossy as unknown as Session, undefined) as Ocpi211.Session).charging_periods, [p1, p2, flat]);
    // The canonical (2.2.1) PATCH rule is unchanged: periods are added.
    assert.deepEqual(mergeSessionPatch(stored, { charging_periods: [p2], last_updated: '2015-06-29T22:41:00Z' })['charging_periods'], [p1, p2]);
  });

  it('a session whose Location has no EVSE is refused with an OCPI error (2001)', () => {
    const sent = session211('Simple Session example of a just starting session');
    const { evses: _e, ...bare } = sent.location;
    assert.throws(() => v211.sessionIn({ ...sent, location: bare }, NL_ABC, token(sent.auth_id)), (e: unknown) => (e as { spec?: { ocpi: number } }).spec?.ocpi === 2001);
  });
});

describe('CDR', () => {
  it('the mod_cdrs.md 3.1 example (repaired) -> canonical -> 2.1.1 as sent', () => {
    const sent = cdr211();
    const canonical = v211.cdrIn(clone(sent), NL_ABC, token(sent.auth_id));
    assertValid('ocpi/cdr.json', canonical);
    assert.equal(canonical.end_date_time, sent.stop_date_time);
    assert.deepEqual(canonical.total_cost, { excl_vat: 4 });
    assert.deepEqual(canonical.cdr_location, {
      id: 'LOC1', name: 'Gent Zuid', address: 'F.Rooseveltlaan 3A', city: 'Gent', postal_code: '9000', country: 'BEL', coordinates: { latitude: '3.729944', longitude: '51.047599' },
      evse_uid: '3256', evse_id: 'BE-BEC-E041503003', connector_id: '1', connector_standard: 'IEC_62196_T2', connector_format: 'SOCKET', connector_power_type: 'AC_1_PHASE',
    });
    assert.deepEqual(canonical.tariffs?.map((t) => [t.country_code, t.party_id]), [['NL', 'ABC']]);
    assert.deepEqual(v211.cdrOut(canonical), sent);
  });

  it('lossy: an EVSE without evse_id gives cdr_location its uid (derived)', () => {
    const sent = cdr211();
    delete sent.location.evses?.[0]?.evse_id;
    const canonical = v211.cdrIn(clone(sent), NL_ABC, token(sent.auth_id));
    assert.equal(canonical.cdr_location.evse_id, '3256');
    assert.deepEqual(canonical.hub_version_fields?.['2.1.1']?.derived, { 'cdr_location.evse_id': true });
    assert.deepEqual(v211.cdrOut(canonical), sent);
  });

  it('a CDR with only FLAT periods is refused (2.2.1 requires a period)', () => {
    const sent = { ...cdr211(), charging_periods: [{ start_date_time: '2015-06-29T21:39:09Z', dimensions: [{ type: 'FLAT' as const, volume: 1 }] }] };
    assert.throws(() => v211.cdrIn(sent, NL_ABC, token(sent.auth_id)), (e: unknown) => (e as { spec?: { ocpi: number } }).spec?.ocpi === 2001);
  });

  it('2.2.1 cdr_example.json -> 2.1.1: the read model\'s Location with the cdr_location\'s facts; dropped fields; none without a Location', () => {
    const canonical = example221('cdr_example.json') as Cdr;
    assertValid('ocpi/cdr.json', canonical);
    const at = canonical.cdr_location;
    const location: Location = {
      country_code: canonical.country_code, party_id: canonical.party_id, id: at.id, publish: true, address: 'old address', city: at.city, country: at.country, coordinates: at.coordinates,
      time_zone: 'Europe/Amsterdam', last_updated: '2015-06-29T21:39:01Z', parking_type: 'ON_STREET',
      evses: [{ uid: at.evse_uid, evse_id: 'OLD', status: 'AVAILABLE', last_updated: '2015-06-29T21:39:01Z', connectors: [{ id: at.connector_id, standard: 'IEC_62196_T1', format: 'CABLE', power_type: 'AC_3_PHASE', max_voltage: 230, max_amperage: 32, last_updated: '2015-06-29T21:39:01Z' }] }],
    };
    const out = v211.cdrOut(canonical, location) as Ocpi211.Cdr;
    assertValid('ocpi-2.1.1/cdr.json', out);
    assert.equal(out.location.address, at.address);
    assert.equal(out.location.evses?.[0]?.evse_id, at.evse_id);
    assert.equal(out.location.evses?.[0]?.connectors[0]?.standard, at.connector_standard);
    assert.equal(out.location.evses?.[0]?.connectors[0]?.voltage, 230);
    assert.equal(out.total_cost, canonical.total_cost.excl_vat);
    assert.equal(out.auth_id, canonical.cdr_token.contract_id);
    for (const dropped of ['end_date_time', 'cdr_token', 'cdr_location', 'total_energy_cost', 'total_time_cost', 'session_id', 'country_code']) assert.equal(dropped in out, false, dropped);
    assert.throws(() => v211.cdrOut(canonical), isNotRepresentable);
    assert.ok(isOcpiVersion('2.1.1'));
  });

  it('lossy: a Credit CDR keeps its negative total_cost, but not credit and credit_reference_id', () => {
    const sent = cdr211();
    const canonical = v211.cdrIn(clone(sent), NL_ABC, token(sent.auth_id));
    const credit = { ...canonical, credit: true, credit_reference_id: 'C1', total_cost: { excl_vat: -4 } };
    const out = v211.cdrOut(credit) as Ocpi211.Cdr;
    assert.equal(out.total_cost, -4);
    assert.equal('credit' in out, false);
  });
});
