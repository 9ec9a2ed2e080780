// Location, EVSE and Connector between OCPI 2.1.1 and the canonical 2.2.1 form (docs/reference/version-mapping.md).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Connector, Evse, Location } from '../src/index.ts';
import { adapterFor, isNotRepresentable, mergeVersionFields, withoutVersionFields } from '../src/index.ts';
import type { Ocpi211 } from '../src/index.ts';
import { assertValid, clone, example211, example221, examples211, NL_ABC, refusedAt } from './examples.ts';

const v211 = adapterFor('2.1.1');
const location211 = (): Ocpi211.Location => clone(example211('mod_locations.md', 'Example')) as Ocpi211.Location;

describe('2.1.1 Location -> canonical -> 2.1.1', () => {
  it('the mod_locations.md 3.1 example is valid 2.1.1, valid canonical, and comes back as sent', () => {
    const sent = location211();
    assertValid('ocpi-2.1.1/location.json', sent);
    const canonical = v211.locationIn(clone(sent), NL_ABC);
    assertValid('ocpi/location.json', canonical);
    assert.equal(canonical.country_code, 'NL');
    assert.equal(canonical.party_id, 'ABC');
    assert.equal(canonical.parking_type, 'ON_STREET');
    assert.deepEqual(canonical.evses?.[0]?.connectors[0]?.tariff_ids, ['11']);
    assert.equal(canonical.evses?.[0]?.connectors[0]?.max_voltage, 220);
    const back = v211.locationOut(canonical);
    assert.deepEqual(back, sent);
    assertValid('ocpi-2.1.1/location.json', back);
  });

  it('publish and time_zone, which 2.1.1 lacks, are derived and recorded so: the country\'s only zone, else UTC', () => {
    const canonical = v211.locationIn(location211(), NL_ABC);
    assert.equal(canonical.publish, true);
    assert.equal(canonical.time_zone, 'Europe/Brussels');
    assert.deepEqual(canonical.hub_version_fields, { '2.1.1': { derived: { publish: true, time_zone: true } } });
    assert.equal(v211.locationIn({ ...location211(), country: 'ESP' }, NL_ABC).time_zone, 'UTC');
    const zoned = v211.locationIn({ ...location211(), time_zone: 'Atlantic/Canary', country: 'ESP' }, NL_ABC);
    assert.equal(zoned.time_zone, 'Atlantic/Canary');
    assert.equal(zoned.hub_version_fields?.['2.1.1']?.derived?.['time_zone'], undefined);
    assert.equal((v211.locationOut(zoned) as Ocpi211.Location).time_zone, 'Atlantic/Canary');
  });

  for (const type of ['OTHER', 'UNKNOWN'] as const) {
    it(`type ${type} (no ParkingType) is kept in the reserved member, absent from 2.2.1 output, and given back`, () => {
      const sent = { ...location211(), type };
      const canonical = v211.locationIn(clone(sent), NL_ABC);
      assert.equal(canonical.parking_type, undefined);
      assert.deepEqual(canonical.hub_version_fields?.['2.1.1']?.kept, { type });
      assertValid('ocpi/location.json', canonical);
      const out221 = adapterFor('2.2.1').locationOut(canonical);
      assert.equal('hub_version_fields' in out221, false);
      assert.deepEqual(v211.locationOut(canonical), sent);
    });
  }

  it('a Location id of 37 to 39 characters is valid 2.1.1 (mod_locations.md 3.1) but no canonical id (36)', () => {
    const sent = { ...location211(), id: 'L'.repeat(39) };
    assertValid('ocpi-2.1.1/location.json', sent);
    assert.deepEqual(refusedAt('ocpi/location.json', withoutVersionFields(v211.locationIn(sent, NL_ABC))), ['/id']);
  });

  it('opening_times without twentyfourseven (regular hours only) round-trip; the derived false is left out again', () => {
    const hours = { regular_hours: [{ weekday: 1, period_begin: '08:00', period_end: '20:00' }] };
    const sent = { ...location211(), opening_times: hours };
    const canonical = v211.locationIn(clone(sent), NL_ABC);
    assert.equal(canonical.opening_times?.twentyfourseven, false);
    assertValid('ocpi/location.json', canonical);
    assert.deepEqual(v211.locationOut(canonical), sent);
  });

  it('the mod_locations.md 4.5 EnergyMix examples: environ_impact source is category in 2.2.1', () => {
    const blocks = examples211('mod_locations.md').filter((e) => e.text.trimStart().startsWith('"energy_mix"'));
    assert.equal(blocks.length, 3);
    for (const block of blocks) {
      const mix = (JSON.parse(`{${block.text}}`) as { energy_mix: NonNullable<Ocpi211.Location['energy_mix']> }).energy_mix;
      const sent = { ...location211(), energy_mix: mix };
      assertValid('ocpi-2.1.1/location.json', sent);
      const canonical = v211.locationIn(clone(sent), NL_ABC);
      assertValid('ocpi/location.json', canonical);
      if (mix.environ_impact) assert.deepEqual(canonical.energy_mix?.environ_impact?.[0], { category: 'NUCLEAR_WASTE', amount: 0.0006 });
      assert.deepEqual(v211.locationOut(canonical), sent);
    }
  });

  it('the mod_locations.md 4.19.1 opening_times example round-trips', () => {
    const block = examples211('mod_locations.md').find((e) => e.heading.startsWith('4.19.1'));
    const hours = (JSON.parse(`{${block?.text ?? ''}}`) as { opening_times: Ocpi211.Hours }).opening_times;
    const sent = { ...location211(), opening_times: hours };
    assertValid('ocpi-2.1.1/location.json', sent);
    const canonical = v211.locationIn(clone(sent), NL_ABC);
    assertValid('ocpi/location.json', canonical);
    assert.deepEqual(v211.locationOut(canonical), sent);
  });
});

describe('2.1.1 PATCH -> canonical PATCH', () => {
  const patch = (heading: string): Record<string, unknown> => example211('mod_locations.md', heading) as Record<string, unknown>;

  it('status (mod_locations.md 2.2.3) is an EVSE PATCH as it is', () => {
    const canonical = v211.evsePatchIn(patch('Example: a simple status update'));
    assert.deepEqual(canonical, { status: 'CHARGING' });
    assertValid('ocpi/evse.json', canonical, true);
  });

  it('name is a Location PATCH as it is', () => {
    assert.deepEqual(v211.locationPatchIn(patch('Example: change the location name')), { name: 'Interparking Gent Zuid' });
  });

  it('tariff_id on a connector is tariff_ids of that one id, and back; null removes', () => {
    const canonical = v211.connectorPatchIn(patch('Example: set tariff update'));
    assert.deepEqual(canonical, { tariff_ids: ['15'] });
    assertValid('ocpi/connector.json', canonical, true);
    assert.deepEqual(v211.connectorPatchOut(canonical as Partial<Connector>), { tariff_id: '15' });
    assert.deepEqual(v211.connectorPatchIn({ tariff_id: null }), { tariff_ids: null });
  });

  it('REMOVED status (delete an EVSE) is an EVSE PATCH as it is', () => {
    assert.deepEqual(v211.evsePatchIn(patch('Example: delete an EVSE')), { status: 'REMOVED' });
  });

  it('the "add an EVSE" example is no valid EVSE (no power_type, voltage, amperage, last_updated; physical_reference a number)', () => {
    const body = patch('Example: add an EVSE');
    const violations = adapterFor('2.1.1').schemaId('evse');
    assert.equal(violations, 'ocpi-2.1.1/evse.json');
    assert.throws(() => assertValid('ocpi-2.1.1/evse.json', body));
  });

  it('type maps to parking_type plus the kept type; merging it into the stored member keeps the derived marks', () => {
    const other = v211.locationPatchIn({ type: 'OTHER' });
    assert.deepEqual(other, { parking_type: null, hub_version_fields: { '2.1.1': { kept: { type: 'OTHER' } } } });
    const street = v211.locationPatchIn({ type: 'ON_STREET' });
    assert.deepEqual(street, { parking_type: 'ON_STREET', hub_version_fields: { '2.1.1': { kept: { type: null } } } });
    const stored = { '2.1.1': { derived: { publish: true, time_zone: true } } } as const;
    const merged = mergeVersionFields(stored, other.hub_version_fields);
    assert.deepEqual(merged, { '2.1.1': { kept: { type: 'OTHER' }, derived: { publish: true, time_zone: true } } });
    assert.deepEqual(mergeVersionFields(merged, street.hub_version_fields), stored);
    assert.deepEqual(v211.locationPatchOut(other), { type: 'OTHER' });
    assert.deepEqual(v211.locationPatchOut({ parking_type: 'ALONG_MOTORWAY' }), { type: 'OTHER' });
  });

  it('a time_zone PATCH clears the derived mark; a time_zone removal is left out (2.2.1 requires one)', () => {
    assert.deepEqual(v211.locationPatchIn({ time_zone: 'Europe/Brussels' }), { time_zone: 'Europe/Brussels', hub_version_fields: { '2.1.1': { derived: { time_zone: null } } } });
    assert.deepEqual(v211.locationPatchIn({ time_zone: null }), {});
  });

  it('a connector PATCH from 2.2.1 renames max_voltage/max_amperage and drops max_electric_power', () => {
    assert.deepEqual(v211.connectorPatchOut({ max_voltage: 400, max_amperage: 32, max_electric_power: 22000, power_type: 'AC_2_PHASE' }), { voltage: 400, amperage: 32, power_type: 'AC_1_PHASE' });
  });
});

describe('canonical (2.2.1) Location -> 2.1.1', () => {
  const files = ['location_example.json', 'location_example_parking_garage_opening_hours.json', 'location_example_uc2_destination_charger.json', 'location_example_uc3_destination_charger_not_published.json', 'location_example_uc4_limited_visibility.json', 'location_example_uc5_home_charge_point.json'];
  for (const file of files) {
    it(`${file} is valid 2.1.1`, () => {
      const canonical = example221(file) as Location;
      assertValid('ocpi/location.json', canonical);
      const out = v211.locationOut(clone(canonical)) as Ocpi211.Location;
      assertValid('ocpi-2.1.1/location.json', out);
      for (const dropped of ['publish', 'publish_allowed_to', 'state', 'country_code', 'party_id', 'parking_type']) assert.equal(dropped in out, false, dropped);
    });
  }

  it('lossy: ALONG_MOTORWAY/ON_DRIVEWAY are OTHER, no parking_type is UNKNOWN, a missing postal_code is "", 2.2.1-only facilities are dropped', () => {
    const base = example221('location_example.json') as Location;
    const out = (l: Partial<Location>): Ocpi211.Location => v211.locationOut({ ...clone(base), ...l }) as Ocpi211.Location;
    assert.equal(out({ parking_type: 'ALONG_MOTORWAY' }).type, 'OTHER');
    assert.equal(out({ parking_type: 'ON_DRIVEWAY' }).type, 'OTHER');
    const { parking_type: _p, postal_code: _z, ...bare } = clone(base);
    const minimal = v211.locationOut(bare) as Ocpi211.Location;
    assert.equal(minimal.type, 'UNKNOWN');
    assert.equal(minimal.postal_code, '');
    assert.deepEqual(out({ facilities: ['HOTEL', 'METRO_STATION', 'PARKING_LOT'] }).facilities, ['HOTEL']);
    assert.equal(out({ facilities: ['TRAM_STOP'] }).facilities, undefined);
  });

  it('lossy: a connector standard 2.1.1 lacks is not representable alone, and its EVSE is left out of a Location', () => {
    const base = example221('location_example.json') as Location;
    const evse = clone(base.evses?.[0]) as Evse;
    const chaoji = { ...evse, connectors: [{ ...evse.connectors[0], standard: 'CHAOJI' }] } as Evse;
    assert.throws(() => v211.evseOut(chaoji), (e) => isNotRepresentable(e) && /no connector with a 2.1.1 standard/.test(e.message));
    assert.throws(() => v211.connectorOut(chaoji.connectors[0]), isNotRepresentable);
    const out = v211.locationOut({ ...clone(base), evses: [chaoji, ...(base.evses ?? []).slice(1)] }) as Ocpi211.Location;
    assert.equal(out.evses?.length, (base.evses?.length ?? 0) - 1);
  });

  it('lossy: the first of several tariff_ids is the tariff_id; two-phase power is AC_1_PHASE; 2.2.1-only capabilities are dropped', () => {
    const evse = clone((example221('location_example.json') as Location).evses?.[0]) as Evse;
    const connector: Connector = { ...evse.connectors[0], tariff_ids: ['T1', 'T2'], power_type: 'AC_2_PHASE_SPLIT', max_electric_power: 7400 };
    const out = v211.connectorOut(connector) as Ocpi211.Connector;
    assert.equal(out.tariff_id, 'T1');
    assert.equal(out.power_type, 'AC_1_PHASE');
    assert.equal('max_electric_power' in out, false);
    const evseOut = v211.evseOut({ ...evse, capabilities: ['RESERVABLE', 'PED_TERMINAL'] }) as Ocpi211.Evse;
    assert.deepEqual(evseOut.capabilities, ['RESERVABLE']);
  });
});

describe('the 2.2.1 adapter', () => {
  it('is the identity: the same object in, and out when there is no hub-private member (no copy)', () => {
    const canonical = example221('location_example.json') as Location;
    const v221 = adapterFor('2.2.1');
    assert.equal(v221.locationIn(canonical, NL_ABC), canonical);
    assert.equal(v221.locationOut(canonical), canonical);
    assert.equal(withoutVersionFields(canonical), canonical);
  });

  it('removes the hub-private member and nothing else', () => {
    const canonical = v211.locationIn(location211(), NL_ABC);
    const out = adapterFor('2.2.1').locationOut(canonical);
    const { hub_version_fields: _h, ...rest } = canonical;
    assert.deepEqual(out, rest);
    assert.ok('hub_version_fields' in canonical, 'the input is not mutated');
  });
});
