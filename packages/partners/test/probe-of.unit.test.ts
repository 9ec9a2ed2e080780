import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { probeOf } from '../src/partner-check.ts';

// The GET the partner check probes each receiver with (docs/how-to/partner-check.md): the receiver's
// own GET of an object no partner has, the hub as the sender in the path; commands for reachability.

const hub = { countryCode: 'NL', partyId: 'HUB' };
const base = 'https://p.example/ocpi/2.2.1/x';

describe('probeOf', () => {
  it('asks each receiver for an object no partner has, at the path its module defines', () => {
    assert.deepEqual(probeOf('sessions', `${base}//`, hub), { url: `${base}/NL/HUB/OCPI-HUB-CHECK-NONEXISTENT`, needsEnvelope: true });
    assert.deepEqual(probeOf('cdrs', base, hub), { url: `${base}/OCPI-HUB-CHECK-NONEXISTENT`, needsEnvelope: true });
    assert.deepEqual(probeOf('tokens', `${base}/`, hub), { url: `${base}/NL/HUB/OCPI-HUB-CHECK-NONEXISTENT?type=RFID`, needsEnvelope: true });
    assert.deepEqual(probeOf('hubclientinfo', base, hub), { url: `${base}/NL/HUB`, needsEnvelope: true });
  });

  it('probes commands for reachability only, with no envelope asked', () => {
    assert.deepEqual(probeOf('commands', base, hub), { url: `${base}/START_SESSION`, needsEnvelope: false });
  });

  it('probes any other identifier at the receiver URL itself', () => {
    for (const m of ['locations', 'tariffs', 'chargingprofiles', 'credentials', 'toString', 'unknown']) assert.deepEqual(probeOf(m, `${base}/`, hub), { url: base, needsEnvelope: true }, m);
  });
});
