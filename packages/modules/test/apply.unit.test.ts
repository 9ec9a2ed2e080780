// How location and tariff events change the stored read model (src/apply.ts), checked against the
// OCPI 2.2.1 Receiver rules: mod_locations.asciidoc "PUT Method" and "PATCH Method" (PATCH merges only
// the fields present; an EVSE change sets the Location's last_updated; a Connector change sets the
// EVSE's and the Location's last_updated) and mod_tariffs.asciidoc "PUT Method". Also the event
// subject and key helpers of src/object-events.ts. Pure: the only reads are the OCPI example files.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { locationEventTypes, locationEventTypes as L, tariffEventTypes, tokenEventTypes } from '@hub/events';
import { applyLocationEvent, applyTariffEvent, applyTokenEvent, findInLocation } from '../src/index.ts';
import type { ApplyResult } from '../src/index.ts';
import { objectKey, parseSubject, pathSubject } from '../src/index.ts';
import type { ObjectPath } from '@hub/core';

type Json = Record<string, unknown>;

const examples = new URL('../../../../shared/ocpi-2.2.1/examples/', import.meta.url);

function example(name: string): Json {
  return JSON.parse(readFileSync(new URL(name, examples), 'utf8')) as Json;
}

/** A fresh, deeply frozen copy of location_example.json: any mutation by apply throws. */
function storedLocation(): Json {
  return deepFreeze(example('location_example.json'));
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

function upserted(result: ApplyResult): Json {
  assert.equal(result.kind, 'upsert', `expected an upsert, got ${JSON.stringify(result)}`);
  return result.kind === 'upsert' ? result.document : {};
}

function evsesOf(location: Json): Json[] {
  assert.ok(Array.isArray(location['evses']), 'location has an evses array');
  return location['evses'] as Json[];
}

function evseOf(location: Json, uid: string): Json {
  const evse = evsesOf(location).find((e) => e['uid'] === uid);
  assert.ok(evse, `EVSE ${uid} present`);
  return evse;
}

function connectorOf(location: Json, uid: string, id: string): Json {
  const connectors = evseOf(location, uid)['connectors'];
  assert.ok(Array.isArray(connectors), `EVSE ${uid} has a connectors array`);
  const connector = (connectors as Json[]).find((c) => c['id'] === id);
  assert.ok(connector, `connector ${uid}/${id} present`);
  return connector;
}

const loc: ObjectPath = { countryCode: 'BE', partyId: 'BEC', id: 'LOC1' };
const evse3256: ObjectPath = { ...loc, evseUid: '3256' };
const evse3257: ObjectPath = { ...loc, evseUid: '3257' };
const connector3256_2: ObjectPath = { ...evse3256, connectorId: '2' };

const T = '2019-06-24T12:39:09Z';

describe('applyLocationEvent: Location PUT and PATCH', () => {
  it('a location PUT replaces the whole stored document with the pushed Location', () => {
    const pushed: Json = { country_code: 'BE', party_id: 'BEC', id: 'LOC1', name: 'New', evses: [], last_updated: T };
    const doc = upserted(applyLocationEvent(storedLocation(), locationEventTypes.locationPut, loc, pushed));
    assert.deepEqual(doc, pushed);
    assert.equal(doc['address'], undefined, 'fields of the old document not in the PUT are gone');
  });

  it('a location PUT without a stored document creates it', () => {
    const pushed = example('location_example.json');
    assert.deepEqual(upserted(applyLocationEvent(undefined, locationEventTypes.locationPut, loc, pushed)), pushed);
  });

  it('a location PATCH replaces the fields present and keeps the absent ones', () => {
    const stored = storedLocation();
    const patch: Json = { name: 'Interparking Gent Zuid', city: 'Ghent', last_updated: T };
    const doc = upserted(applyLocationEvent(stored, locationEventTypes.locationPatched, loc, patch));
    assert.deepEqual(doc, { ...example('location_example.json'), ...patch });
    assert.equal(doc['address'], 'F.Rooseveltlaan 3A');
    assert.deepEqual(doc['evses'], stored['evses']);
  });

  it('a location PATCH replaces an array field wholesale instead of merging its elements', () => {
    const patch = { evses: [{ uid: '9999', status: 'AVAILABLE', last_updated: T }], facilities: ['HOTEL'], last_updated: T };
    const doc = upserted(applyLocationEvent(storedLocation(), locationEventTypes.locationPatched, loc, patch));
    assert.deepEqual(doc['evses'], patch.evses);
    assert.deepEqual(doc['facilities'], ['HOTEL']);
  });

  it('a location PATCH replaces a nested object field wholesale', () => {
    const patch = { coordinates: { latitude: '1.0', longitude: '2.0' }, last_updated: T };
    const doc = upserted(applyLocationEvent(storedLocation(), locationEventTypes.locationPatched, loc, patch));
    assert.deepEqual(doc['coordinates'], { latitude: '1.0', longitude: '2.0' });
  });

  it("a location PATCH of an unknown location is rejected as 'unknown location'", () => {
    assert.deepEqual(applyLocationEvent(undefined, locationEventTypes.locationPatched, loc, { name: 'x', last_updated: T }), {
      kind: 'rejected',
      reason: 'unknown location',
    });
  });

  it('an unknown location event type is rejected and names the type', () => {
    const result = applyLocationEvent(storedLocation(), 'ocpi.locations.location-deleted.v1', loc, {});
    assert.deepEqual(result, { kind: 'rejected', reason: 'unknown event type ocpi.locations.location-deleted.v1' });
  });

  it('the tariff event type is not a location event type', () => {
    const result = applyLocationEvent(storedLocation(), tariffEventTypes.tariffPut, loc, {});
    assert.equal(result.kind, 'rejected');
  });
});

describe('applyLocationEvent: EVSE PUT and PATCH', () => {
  it('an EVSE PUT with a new uid appends the EVSE and sets the location last_updated to its value', () => {
    const newEvse = { uid: '3258', evse_id: 'BE*BEC*E041503003', status: 'AVAILABLE', connectors: [], last_updated: T };
    const doc = upserted(applyLocationEvent(storedLocation(), locationEventTypes.evsePut, { ...loc, evseUid: '3258' }, newEvse));
    assert.deepEqual(
      evsesOf(doc).map((e) => e['uid']),
      ['3256', '3257', '3258'],
    );
    assert.deepEqual(evseOf(doc, '3258'), newEvse);
    assert.equal(doc['last_updated'], T);
  });

  it('an EVSE PUT with an existing uid replaces that EVSE in place, leaving the others', () => {
    const stored = storedLocation();
    const put = example('location_put_example_add_evse.json');
    const doc = upserted(applyLocationEvent(stored, locationEventTypes.evsePut, evse3256, put));
    assert.deepEqual(evsesOf(doc), [put, evsesOf(stored)[1]]);
    assert.equal(evseOf(doc, '3256')['floor_level'], undefined, 'fields of the replaced EVSE not in the PUT are gone');
    assert.equal(doc['last_updated'], T);
    assert.equal(doc['name'], 'Gent Zuid');
  });

  it('a new EVSE older than the location keeps the location last_updated (a parent never moves back)', () => {
    const older = '2010-01-01T00:00:00Z';
    const doc = upserted(applyLocationEvent(storedLocation(), locationEventTypes.evsePut, { ...loc, evseUid: 'NEW' }, { uid: 'NEW', status: 'AVAILABLE', last_updated: older }));
    assert.equal(evseOf(doc, 'NEW')['last_updated'], older);
    assert.equal(doc['last_updated'], '2015-06-29T20:39:09Z');
  });

  it('an EVSE PATCH merges into the stored EVSE and propagates its last_updated to the location', () => {
    const stored = storedLocation();
    const doc = upserted(applyLocationEvent(stored, locationEventTypes.evsePatched, evse3257, { status: 'CHARGING', last_updated: T }));
    const evse = evseOf(doc, '3257');
    assert.deepEqual(evse, { ...evsesOf(stored)[1], status: 'CHARGING', last_updated: T });
    assert.equal(doc['last_updated'], T);
    assert.deepEqual(evseOf(doc, '3256'), evsesOf(stored)[0]);
    assert.equal(evsesOf(doc).length, 2);
  });

  it('finds an EVSE and a connector whatever the case of the path (CiString, types.asciidoc), keeping the stored ids', () => {
    const stored = deepFreeze({ ...storedLocation(), evses: [{ ...evsesOf(storedLocation())[0], uid: 'Ab3256' }] });
    const doc = upserted(applyLocationEvent(stored, locationEventTypes.evsePatched, { ...loc, evseUid: 'AB3256' }, { status: 'CHARGING', last_updated: T }));
    assert.equal(evsesOf(doc).length, 1);
    assert.equal(evsesOf(doc)[0]?.['uid'], 'Ab3256');
    assert.equal(evsesOf(doc)[0]?.['status'], 'CHARGING');
    assert.equal(findInLocation(doc, { ...loc, evseUid: 'ab3256' })?.['uid'], 'Ab3256');
  });

  it('an EVSE PATCH replaces the connectors array wholesale when it carries one', () => {
    const connectors = [{ id: '7', standard: 'CHADEMO', format: 'CABLE', last_updated: T }];
    const doc = upserted(applyLocationEvent(storedLocation(), locationEventTypes.evsePatched, evse3256, { connectors, last_updated: T }));
    assert.deepEqual(evseOf(doc, '3256')['connectors'], connectors);
  });

  it("an EVSE PATCH of an unknown uid is rejected as 'unknown EVSE'", () => {
    const result = applyLocationEvent(storedLocation(), locationEventTypes.evsePatched, { ...loc, evseUid: 'nope' }, { status: 'CHARGING', last_updated: T });
    assert.deepEqual(result, { kind: 'rejected', reason: 'unknown EVSE' });
  });

  it("an EVSE PUT or PATCH into an unknown location is rejected as 'unknown location'", () => {
    const evse = { uid: '3256', status: 'AVAILABLE', last_updated: T };
    for (const type of [locationEventTypes.evsePut, locationEventTypes.evsePatched]) {
      assert.deepEqual(applyLocationEvent(undefined, type, evse3256, evse), { kind: 'rejected', reason: 'unknown location' }, type);
    }
  });
});

describe("applyLocationEvent: what another version's partner sent of an EVSE or Connector", () => {
  // packages/versions/src/v2.3.0/index.ts: a 2.3.0 EVSE's parking is kept in the Location's member under evses.<uid>.
  const fields = (kept: Json) => ({ hub_version_fields: { '2.3.0': { kept } } });
  const T2 = '2019-06-24T12:40:00Z';

  it("is kept in the Location's member under the child's path, never inside evses[]; a detail read gets it back as the child's own", () => {
    const put = { ...evseOf(storedLocation(), '3256'), ...fields({ parking: [{ parking_id: '1' }], 'connectors.1.standard': 'MCS' }), last_updated: T };
    const doc = upserted(applyLocationEvent(storedLocation(), L.evsePut, evse3256, put));
    assert.ok(!('hub_version_fields' in evseOf(doc, '3256')));
    assert.deepEqual(doc['hub_version_fields'], { '2.3.0': { kept: { 'evses.3256.parking': [{ parking_id: '1' }], 'evses.3256.connectors.1.standard': 'MCS' } } });
    assert.deepEqual(findInLocation(doc, evse3256)?.['hub_version_fields'], { '2.3.0': { kept: { parking: [{ parking_id: '1' }], 'connectors.1.standard': 'MCS' } } });
    assert.deepEqual(findInLocation(doc, { ...evse3256, connectorId: '1' })?.['hub_version_fields'], { '2.3.0': { kept: { standard: 'MCS' } } });
    assert.ok(!('hub_version_fields' in (findInLocation(doc, evse3257) ?? {})));

    // A PATCH merges; null removes one member.
    const patched = upserted(applyLocationEvent(doc, L.evsePatched, evse3256, { status: 'CHARGING', ...fields({ parking: null, capabilities: ['X'] }), last_updated: T2 }));
    assert.deepEqual(patched['hub_version_fields'], { '2.3.0': { kept: { 'evses.3256.connectors.1.standard': 'MCS', 'evses.3256.capabilities': ['X'] } } });
    assert.ok(!('hub_version_fields' in evseOf(patched, '3256')));

    // A PUT without any replaces all that was kept of the EVSE (and only of that EVSE).
    const withOther = { ...patched, hub_version_fields: { '2.3.0': { kept: { ...(patched['hub_version_fields'] as { '2.3.0': { kept: Json } })['2.3.0'].kept, 'evses.3257.parking': [] } } } };
    const replaced = upserted(applyLocationEvent(withOther, L.evsePut, evse3256, { ...evseOf(storedLocation(), '3256'), last_updated: '2019-06-24T12:41:00Z' }));
    assert.deepEqual(replaced['hub_version_fields'], { '2.3.0': { kept: { 'evses.3257.parking': [] } } });
  });

  it('follows a CiString uid whose spelling changed (types.asciidoc): nothing is left under the old one', () => {
    const lower = upserted(applyLocationEvent(storedLocation(), L.evsePut, { ...loc, evseUid: 'e1' }, { uid: 'e1', status: 'AVAILABLE', connectors: [], ...fields({ parking: [] }), last_updated: T }));
    assert.deepEqual(lower['hub_version_fields'], { '2.3.0': { kept: { 'evses.e1.parking': [] } } });
    const patched = upserted(applyLocationEvent(lower, L.evsePatched, { ...loc, evseUid: 'E1' }, { uid: 'E1', status: 'CHARGING', last_updated: T2 }));
    assert.deepEqual(patched['hub_version_fields'], { '2.3.0': { kept: { 'evses.E1.parking': [] } } });
    assert.deepEqual(findInLocation(patched, { ...loc, evseUid: 'e1' })?.['hub_version_fields'], { '2.3.0': { kept: { parking: [] } } });
    const replaced = upserted(applyLocationEvent(lower, L.evsePut, { ...loc, evseUid: 'E1' }, { uid: 'E1', status: 'AVAILABLE', connectors: [], last_updated: T2 }));
    assert.ok(!('hub_version_fields' in replaced), JSON.stringify(replaced['hub_version_fields']));
  });

  it("of a Connector, under evses.<uid>.connectors.<id>", () => {
    const stored = storedLocation();
    const connector = { ...connectorOf(stored, '3256', '2'), ...fields({ standard: 'MCS' }), last_updated: T };
    const doc = upserted(applyLocationEvent(stored, L.connectorPut, connector3256_2, connector));
    assert.deepEqual(doc['hub_version_fields'], { '2.3.0': { kept: { 'evses.3256.connectors.2.standard': 'MCS' } } });
    assert.ok(!('hub_version_fields' in connectorOf(doc, '3256', '2')));
  });
});

describe('applyLocationEvent: Connector PUT and PATCH', () => {
  it('a connector PUT with a new id appends it and sets the EVSE and location last_updated', () => {
    const connector = { id: '3', standard: 'CHADEMO', format: 'CABLE', power_type: 'DC', last_updated: T };
    const stored = storedLocation();
    const doc = upserted(applyLocationEvent(stored, locationEventTypes.connectorPut, { ...evse3256, connectorId: '3' }, connector));
    const evse = evseOf(doc, '3256');
    assert.deepEqual(
      (evse['connectors'] as Json[]).map((c) => c['id']),
      ['1', '2', '3'],
    );
    assert.deepEqual(connectorOf(doc, '3256', '3'), connector);
    assert.equal(evse['last_updated'], T);
    assert.equal(doc['last_updated'], T);
    assert.deepEqual(evseOf(doc, '3257'), evsesOf(stored)[1], 'the other EVSE is untouched');
  });

  it('a connector PUT with an existing id replaces that connector and sets the EVSE and location last_updated', () => {
    const stored = storedLocation();
    const connector = { id: '2', standard: 'IEC_62196_T2_COMBO', format: 'CABLE', power_type: 'DC', last_updated: T };
    const doc = upserted(applyLocationEvent(stored, locationEventTypes.connectorPut, connector3256_2, connector));
    const connectors = evseOf(doc, '3256')['connectors'] as Json[];
    assert.deepEqual(connectors, [(evsesOf(stored)[0]?.['connectors'] as Json[])[0], connector]);
    assert.equal(connectorOf(doc, '3256', '2')['max_voltage'], undefined, 'fields of the replaced connector not in the PUT are gone');
    assert.equal(evseOf(doc, '3256')['last_updated'], T);
    assert.equal(doc['last_updated'], T);
  });

  it('a connector PATCH merges into the stored connector and sets the EVSE and location last_updated', () => {
    const stored = storedLocation();
    const doc = upserted(applyLocationEvent(stored, locationEventTypes.connectorPatched, connector3256_2, { tariff_ids: ['15'], last_updated: T }));
    const before = (evsesOf(stored)[0]?.['connectors'] as Json[])[1];
    assert.deepEqual(connectorOf(doc, '3256', '2'), { ...before, tariff_ids: ['15'], last_updated: T });
    assert.deepEqual(connectorOf(doc, '3256', '1'), (evsesOf(stored)[0]?.['connectors'] as Json[])[0]);
    assert.equal(evseOf(doc, '3256')['last_updated'], T);
    assert.equal(evseOf(doc, '3256')['status'], 'AVAILABLE', 'other EVSE fields are kept');
    assert.equal(doc['last_updated'], T);
  });

  it("a connector PUT or PATCH on an unknown EVSE is rejected as 'unknown EVSE'", () => {
    const path = { ...loc, evseUid: 'nope', connectorId: '1' };
    for (const type of [locationEventTypes.connectorPut, locationEventTypes.connectorPatched]) {
      assert.deepEqual(applyLocationEvent(storedLocation(), type, path, { id: '1', last_updated: T }), { kind: 'rejected', reason: 'unknown EVSE' }, type);
    }
  });

  it("a connector PATCH of an unknown connector id is rejected as 'unknown connector'", () => {
    const result = applyLocationEvent(storedLocation(), locationEventTypes.connectorPatched, { ...evse3257, connectorId: '2' }, { tariff_ids: ['1'], last_updated: T });
    assert.deepEqual(result, { kind: 'rejected', reason: 'unknown connector' });
  });

  it("a connector PUT or PATCH into an unknown location is rejected as 'unknown location'", () => {
    for (const type of [locationEventTypes.connectorPut, locationEventTypes.connectorPatched]) {
      assert.deepEqual(applyLocationEvent(undefined, type, connector3256_2, { id: '2', last_updated: T }), { kind: 'rejected', reason: 'unknown location' }, type);
    }
  });
});

describe('applyLocationEvent: the OCPI PATCH examples', () => {
  it('the four location_patch_example_*.json applied in sequence to location_example.json give the documented result', () => {
    // mod_locations.asciidoc, PATCH Method examples, mapped onto BE/BEC/LOC1: a simple status update of
    // the first EVSE (3256), a change of the location name, a new tariff on connector 2 of the first
    // EVSE, and the deletion (status REMOVED) of the other EVSE (3257).
    const steps: [string, ObjectPath, Json][] = [
      [locationEventTypes.evsePatched, evse3256, example('location_patch_example_status.json')],
      [locationEventTypes.locationPatched, loc, example('location_patch_example_location.json')],
      [locationEventTypes.connectorPatched, connector3256_2, example('location_patch_example_tariff.json')],
      [locationEventTypes.evsePatched, evse3257, example('location_patch_example_remove_evse.json')],
    ];
    let doc: Json = storedLocation();
    for (const [type, path, body] of steps) doc = deepFreeze(upserted(applyLocationEvent(doc, type, path, body)));

    const expected = example('location_example.json');
    expected['name'] = 'Interparking Gent Zuid';
    expected['last_updated'] = T;
    const [e1, e2] = expected['evses'] as Json[];
    assert.ok(e1 && e2);
    e1['status'] = 'CHARGING';
    e1['last_updated'] = T;
    const c2 = (e1['connectors'] as Json[])[1];
    assert.ok(c2);
    c2['tariff_ids'] = ['15'];
    c2['last_updated'] = T;
    e2['status'] = 'REMOVED';
    e2['last_updated'] = T;

    assert.deepEqual(doc, expected);
    assert.equal(connectorOf(doc, '3256', '1')['last_updated'], '2015-03-16T10:10:02Z', 'untouched connector keeps its last_updated');
    assert.equal(connectorOf(doc, '3257', '1')['last_updated'], '2015-06-29T20:39:09Z');
  });
});

describe('applyLocationEvent is pure', () => {
  it('no event mutates the stored input document', () => {
    const pristine = example('location_example.json');
    const cases: [string, ObjectPath, Json][] = [
      [locationEventTypes.locationPut, loc, { id: 'LOC1', last_updated: T }],
      [locationEventTypes.locationPatched, loc, { name: 'x', evses: [], last_updated: T }],
      [locationEventTypes.evsePut, evse3256, { uid: '3256', last_updated: T }],
      [locationEventTypes.evsePut, { ...loc, evseUid: 'new' }, { uid: 'new', last_updated: T }],
      [locationEventTypes.evsePatched, evse3257, { status: 'CHARGING', last_updated: T }],
      [locationEventTypes.connectorPut, connector3256_2, { id: '2', last_updated: T }],
      [locationEventTypes.connectorPut, { ...evse3257, connectorId: '9' }, { id: '9', last_updated: T }],
      [locationEventTypes.connectorPatched, connector3256_2, { tariff_ids: ['15'], last_updated: T }],
    ];
    for (const [type, path, data] of cases) {
      // Not frozen here, so a mutation would not throw but would show up in the comparison below.
      const stored = example('location_example.json');
      const doc = upserted(applyLocationEvent(stored, type, path, data));
      assert.deepEqual(stored, pristine, `${type} left the stored document unchanged`);
      assert.notEqual(doc, stored, `${type} returned a new document`);
    }
  });

  it('the returned document shares no changed EVSE or connector object with the input', () => {
    const stored = example('location_example.json');
    const doc = upserted(applyLocationEvent(stored, locationEventTypes.connectorPatched, connector3256_2, { tariff_ids: ['15'], last_updated: T }));
    assert.notEqual(doc['evses'], stored['evses']);
    assert.notEqual(evseOf(doc, '3256'), evseOf(stored, '3256'));
    assert.notEqual(connectorOf(doc, '3256', '2'), connectorOf(stored, '3256', '2'));
    assert.deepEqual(connectorOf(stored, '3256', '2')['tariff_ids'], ['13']);
  });
});

describe('applyTariffEvent', () => {
  it('a tariff PUT creates the tariff when none is stored', () => {
    const tariff = example('tariff_1_simple_2hour.json');
    assert.deepEqual(applyTariffEvent(undefined, tariffEventTypes.tariffPut, tariff), { kind: 'upsert', document: tariff });
  });

  it('a tariff PUT replaces the stored tariff wholesale', () => {
    const stored = deepFreeze(example('tariff_1_simple_2hour.json'));
    const pushed = example('tariff_put_example.json');
    const doc = upserted(applyTariffEvent(stored, tariffEventTypes.tariffPut, pushed));
    assert.deepEqual(doc, pushed);
    assert.equal(doc['last_updated'], undefined, 'fields of the stored tariff not in the PUT are gone');
  });

  it('a tariff DELETE removes the stored tariff, and is rejected for a tariff never stored', () => {
    const stored = deepFreeze(example('tariff_1_simple_2hour.json'));
    assert.deepEqual(applyTariffEvent(stored, tariffEventTypes.tariffDeleted, {}), { kind: 'deleted' });
    assert.deepEqual(applyTariffEvent(undefined, tariffEventTypes.tariffDeleted, {}), { kind: 'rejected', reason: 'unknown tariff' });
  });

  it('an unknown tariff event type is rejected and names the type', () => {
    const type = 'ocpi.tariffs.tariff-patched.v1';
    assert.deepEqual(applyTariffEvent(undefined, type, example('tariff_put_example.json')), { kind: 'rejected', reason: `unknown event type ${type}` });
    assert.equal(applyTariffEvent(undefined, locationEventTypes.locationPut, {}).kind, 'rejected');
  });
});

// Newest wins (docs/decisions/0001-newest-state-wins.md): each pair is applied newer first, the
// older update must leave what the newer one wrote; equal times apply in log order.
describe('newest wins: an update older than the object it writes is superseded', () => {
  const T1 = '2026-01-01T10:00:00Z';
  const T2 = '2026-01-01T10:00:01Z';
  const superseded = (result: ApplyResult) => assert.equal(result.kind, 'superseded', `expected superseded, got ${JSON.stringify(result)}`);
  const base = (): Json => deepFreeze({ ...example('location_example.json'), last_updated: T1, evses: (example('location_example.json')['evses'] as Json[]).map((e) => ({ ...e, last_updated: T1, connectors: (e['connectors'] as Json[]).map((c) => ({ ...c, last_updated: T1 })) })) });

  it('location PUT and PATCH', () => {
    const newer = upserted(applyLocationEvent(base(), L.locationPatched, loc, { name: 'Newer', last_updated: T2 }));
    superseded(applyLocationEvent(newer, L.locationPatched, loc, { name: 'Older', last_updated: T1.replace('10:00:00', '09:59:59') }));
    superseded(applyLocationEvent(newer, L.locationPut, loc, { ...base(), name: 'Older PUT', last_updated: T1 }));
    assert.equal(upserted(applyLocationEvent(newer, L.locationPatched, loc, { name: 'Same time', last_updated: T2 }))['name'], 'Same time', 'equal times apply in log order');
  });

  it('EVSE status: CHARGING at T2 is not replaced by AVAILABLE at T1', () => {
    const newer = upserted(applyLocationEvent(base(), L.evsePatched, evse3256, { status: 'CHARGING', last_updated: T2 }));
    const result = applyLocationEvent(newer, L.evsePatched, evse3256, { status: 'AVAILABLE', last_updated: T1 });
    superseded(result);
    assert.match(result.kind === 'superseded' ? result.reason : '', /older than/);
    superseded(applyLocationEvent(newer, L.evsePut, evse3256, { uid: '3256', status: 'AVAILABLE', last_updated: T1 }));
    // The other EVSE was not written at T2: an update of it at T1 (equal to its own) applies.
    assert.equal(evseOf(upserted(applyLocationEvent(newer, L.evsePatched, evse3257, { status: 'BLOCKED', last_updated: T1 })), '3257')['status'], 'BLOCKED');
  });

  it('connector max_amperage: 16 at T2 is not replaced by 20 at T1', () => {
    const newer = upserted(applyLocationEvent(base(), L.connectorPatched, connector3256_2, { max_amperage: 16, last_updated: T2 }));
    superseded(applyLocationEvent(newer, L.connectorPatched, connector3256_2, { max_amperage: 20, last_updated: T1 }));
    superseded(applyLocationEvent(newer, L.connectorPut, connector3256_2, { ...connectorOf(base(), '3256', '2'), max_amperage: 20, last_updated: T1 }));
    assert.equal(connectorOf(newer, '3256', '2')['max_amperage'], 16);
  });

  it('tariff PUT', () => {
    const newer = { ...example('tariff_1_simple_2hour.json'), last_updated: T2 };
    superseded(applyTariffEvent(newer, tariffEventTypes.tariffPut, { ...newer, currency: 'USD', last_updated: T1 }));
    assert.equal(upserted(applyTariffEvent(newer, tariffEventTypes.tariffPut, { ...newer, currency: 'USD', last_updated: T2 }))['currency'], 'USD');
  });

  it('token PUT and PATCH', () => {
    const newer = { uid: '012345678', type: 'RFID', valid: false, last_updated: T2 };
    superseded(applyTokenEvent(newer, tokenEventTypes.tokenPatched, { valid: true, last_updated: T1 }));
    superseded(applyTokenEvent(newer, tokenEventTypes.tokenPut, { ...newer, valid: true, last_updated: T1 }));
    assert.equal(upserted(applyTokenEvent(newer, tokenEventTypes.tokenPatched, { valid: true, last_updated: T2 }))['valid'], true);
  });

  it('times in other forms compare as instants; an unreadable time applies in log order', () => {
    const newer = upserted(applyLocationEvent(base(), L.evsePatched, evse3256, { status: 'CHARGING', last_updated: '2026-01-01T10:00:01.500Z' }));
    superseded(applyLocationEvent(newer, L.evsePatched, evse3256, { status: 'AVAILABLE', last_updated: '2026-01-01T10:00:01.499+00:00' }));
    assert.equal(upserted(applyLocationEvent(newer, L.evsePatched, evse3256, { status: 'AVAILABLE', last_updated: 'yesterday' }))['last_updated'], '2026-01-01T10:00:01.500Z');
  });
});

describe('findInLocation', () => {
  const location = deepFreeze(example('location_example.json'));

  it('returns the location itself for a location path', () => {
    assert.equal(findInLocation(location, loc), location);
  });

  it('returns the EVSE for an EVSE path', () => {
    assert.equal(findInLocation(location, evse3257), evsesOf(location)[1]);
    assert.equal(findInLocation(location, evse3257)?.['evse_id'], 'BE*BEC*E041503002');
  });

  it('returns the connector of the addressed EVSE for a connector path', () => {
    assert.equal(findInLocation(location, connector3256_2), connectorOf(location, '3256', '2'));
    assert.deepEqual(findInLocation(location, { ...evse3257, connectorId: '1' })?.['tariff_ids'], ['12']);
  });

  it('returns undefined for an unknown EVSE or an unknown connector', () => {
    assert.equal(findInLocation(location, { ...loc, evseUid: 'nope' }), undefined);
    assert.equal(findInLocation(location, { ...loc, evseUid: 'nope', connectorId: '1' }), undefined);
    assert.equal(findInLocation(location, { ...evse3257, connectorId: '2' }), undefined);
    assert.equal(findInLocation({ id: 'LOC2' }, evse3256), undefined, 'a location without evses has no EVSE');
  });
});

describe('pathSubject and parseSubject', () => {
  it('round-trip location, EVSE and connector paths', () => {
    for (const path of [loc, evse3256, connector3256_2]) {
      assert.deepEqual(parseSubject(pathSubject(path)), path);
    }
    assert.equal(pathSubject(connector3256_2), 'BE/BEC/LOC1/3256/2');
  });

  it("URI-encode segments so ids containing '/' or spaces round-trip", () => {
    const path: ObjectPath = { countryCode: 'NL', partyId: 'TNM', id: 'site/1 a', evseUid: 'evse/2 b', connectorId: 'c 3/x' };
    const subject = pathSubject(path);
    assert.equal(subject, 'NL/TNM/site%2F1%20a/evse%2F2%20b/c%203%2Fx');
    assert.equal(subject.split('/').length, 5);
    assert.deepEqual(parseSubject(subject), path);
  });

  it('upper-case country_code and party_id but keep the id as it is', () => {
    const subject = pathSubject({ countryCode: 'be', partyId: 'bec', id: 'Loc1', evseUid: 'e1' });
    assert.equal(subject, 'BE/BEC/Loc1/e1');
    assert.deepEqual(parseSubject(subject), { countryCode: 'BE', partyId: 'BEC', id: 'Loc1', evseUid: 'e1' });
  });

  it('parseSubject rejects empty and incomplete subjects', () => {
    for (const subject of ['', 'BE', 'BE/BEC', 'BE/BEC/', '/BEC/LOC1', 'BE//LOC1']) {
      assert.equal(parseSubject(subject), undefined, JSON.stringify(subject));
    }
  });

  it('parseSubject rejects subjects with more than five segments', () => {
    assert.equal(parseSubject('BE/BEC/LOC1/3256/2/extra'), undefined);
    assert.ok(parseSubject('BE/BEC/LOC1/3256/2'), 'five segments are accepted');
  });
});

describe('objectKey', () => {
  it('is CC/PID/id for location, EVSE and connector paths alike', () => {
    for (const path of [loc, evse3256, connector3256_2]) assert.equal(objectKey(path), 'BE/BEC/LOC1');
  });

  it('upper-cases country_code and party_id, so all events of one location share a key', () => {
    const keys = new Set([
      objectKey({ countryCode: 'be', partyId: 'bec', id: 'LOC1' }),
      objectKey({ countryCode: 'Be', partyId: 'BeC', id: 'LOC1', evseUid: '3257' }),
      objectKey(connector3256_2),
    ]);
    assert.deepEqual([...keys], ['BE/BEC/LOC1']);
  });

  it('differs between locations', () => {
    assert.notEqual(objectKey(loc), objectKey({ ...loc, id: 'LOC2' }));
  });
});
