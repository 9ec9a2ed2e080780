// Which objects a PATCH or child PUT may skip the existence query for: locations for good, EVSEs and
// connectors for a while, and not after a push that may have removed them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KnownObjects } from '../src/http/ocpi-objects.ts';

const location = { countryCode: 'NL', partyId: 'CPO', id: 'LOC1' };
const evse = { ...location, evseUid: 'E1' };
const connector = { ...evse, connectorId: '1' };
const other = { countryCode: 'NL', partyId: 'CPO', id: 'LOC2', evseUid: 'E1' };

// random 1: every child trusted for the whole time to live (the jitter has its own test).
function given(options: { childTtlMs?: number; max?: number; random?: () => number } = {}) {
  let now = 1_000;
  const known = new KnownObjects({ random: () => 1, ...options, now: () => now });
  return { known, advance: (ms: number) => void (now += ms) };
}

describe('KnownObjects', () => {
  it('knows nothing at first, and what was added afterwards', () => {
    const { known } = given();
    for (const path of [location, evse, connector]) assert.equal(known.has('locations', path), false);
    for (const path of [location, evse, connector]) known.add('locations', path);
    for (const path of [location, evse, connector]) assert.equal(known.has('locations', path), true);
    assert.equal(known.has('tariffs', location), false, 'per read model');
  });

  it('keeps a location for good, an EVSE or connector only for the time to live', () => {
    const { known, advance } = given({ childTtlMs: 5_000 });
    for (const path of [location, evse, connector]) known.add('locations', path);
    advance(4_999);
    assert.equal(known.has('locations', connector), true);
    advance(1);
    assert.equal(known.has('locations', location), true);
    assert.equal(known.has('locations', evse), false);
    assert.equal(known.has('locations', connector), false);
    known.add('locations', evse);
    assert.equal(known.has('locations', evse), true, 'a fresh check trusts it again');
  });

  it('spreads the expiry of children checked in one moment over half to all of the time to live, so they are not all queried again in one burst', () => {
    const { known, advance } = given({ childTtlMs: 5_000, random: Math.random });
    const evses = Array.from({ length: 1_000 }, (_, n) => ({ ...location, id: `LOC${n}`, evseUid: 'E1' }));
    for (const path of evses) known.add('locations', path);
    const trusted = () => evses.filter((path) => known.has('locations', path)).length;
    advance(2_500);
    assert.equal(trusted(), 1_000, 'none before half the time to live');
    advance(1_250);
    assert.ok(trusted() > 300 && trusted() < 700, `about half at three quarters of it, got ${trusted()}`);
    advance(1_250);
    assert.equal(trusted(), 0, 'none after the time to live');
  });

  it('forgets the children of one location (not the location, not other locations) after a push that may remove them', () => {
    const { known } = given();
    for (const path of [location, evse, connector, other]) known.add('locations', path);
    known.forgetChildren('locations', evse);
    assert.equal(known.has('locations', location), true);
    assert.equal(known.has('locations', evse), false);
    assert.equal(known.has('locations', connector), false);
    assert.equal(known.has('locations', other), true);
  });

  it('does not cache the children of a location for the time to live after forgetting them (the read model may still show them)', () => {
    const { known, advance } = given({ childTtlMs: 5_000 });
    known.add('locations', connector);
    known.forgetChildren('locations', location);
    known.add('locations', connector); // the existence query still found it
    assert.equal(known.has('locations', connector), false, 'checked again on the next PATCH');
    known.add('locations', other);
    assert.equal(known.has('locations', other), true, 'other locations are unaffected');
    advance(5_000);
    known.add('locations', connector);
    assert.equal(known.has('locations', connector), true, 'cached again once settled');
  });

  it('starts over when full', () => {
    const { known } = given({ max: 3 });
    for (const path of [location, evse, connector]) known.add('locations', path);
    known.add('locations', other);
    assert.equal(known.has('locations', location), false);
    assert.equal(known.has('locations', other), true);
  });
});
