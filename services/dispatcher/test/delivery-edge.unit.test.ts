// What a delivery sends in the receiver's OCPI version (delivery-edge.ts): logic without I/O, the
// Location read model stood in for by a function.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deliveryBody } from '../src/delivery-edge.ts';

const cpo = { countryCode: 'NL', partyId: 'CPO' };
const session = {
  country_code: 'NL', party_id: 'CPO', id: 'S1', start_date_time: '2026-01-01T00:00:00Z', kwh: 1,
  cdr_token: { country_code: 'DE', party_id: 'EMS', uid: 'U1', type: 'RFID', contract_id: 'DE-EMS-C00000001-1' },
  auth_method: 'WHITELIST', location_id: 'L1', evse_uid: 'E1', connector_id: '1', currency: 'EUR', status: 'ACTIVE', last_updated: '2026-01-01T00:00:00Z',
};
const noLocation = async () => undefined;

describe('deliveryBody', () => {
  it('sends a 2.2.1 receiver the canonical object without the hub-private member, and the same object when it has none', async () => {
    const withFields = { ...session, hub_version_fields: { '2.1.1': { kept: { x: 1 } } } };
    const out = await deliveryBody('session', '2.2.1', withFields, cpo, noLocation);
    assert.deepEqual(out, { ok: true, body: session });
    const same = await deliveryBody('session', '2.2.1', session, cpo, noLocation);
    assert.ok(same.ok && same.body === session, 'no copy when there is nothing to strip');
  });

  it('retries a session for a 2.1.1 eMSP whose Location the hub does not hold yet (2.1.1 carries the whole Location)', async () => {
    const out = await deliveryBody('session', '2.1.1', session, cpo, noLocation);
    assert.equal(out.ok, false);
    assert.ok(!out.ok && out.retry === true && /Location NL\/CPO\/L1 is not in the read model/.test(out.reason));
  });

  it("finds a 2.1.1 session's EVSE and connector by their CiString ids, and retries one its Location does not hold yet (pushed just before)", async () => {
    const connector = { id: '1', standard: 'IEC_62196_T2', format: 'SOCKET', power_type: 'AC_3_PHASE', max_voltage: 230, max_amperage: 16, last_updated: '2026-01-01T00:00:00Z' };
    const location = {
      country_code: 'NL', party_id: 'CPO', id: 'L1', publish: true, address: 'Street 1', city: 'Town', country: 'NLD', coordinates: { latitude: '52.0', longitude: '5.0' }, time_zone: 'Europe/Amsterdam', last_updated: '2026-01-01T00:00:00Z',
      evses: [{ uid: 'e1', status: 'AVAILABLE', connectors: [connector], last_updated: '2026-01-01T00:00:00Z' }],
    };
    const found = await deliveryBody('session', '2.1.1', session, cpo, async () => location);
    assert.equal(found.ok, true, JSON.stringify(found));
    const other = await deliveryBody('session', '2.1.1', { ...session, evse_uid: 'E2' }, cpo, async () => location);
    assert.ok(!other.ok && other.retry === true, JSON.stringify(other));
  });

  it('parks what 2.1.1 has no module for (ClientInfo), with the reason', async () => {
    const out = await deliveryBody('client_info', '2.1.1', { party_id: 'X' }, cpo, noLocation);
    assert.deepEqual(out, { ok: false, reason: 'OCPI 2.1.1 has no client_info to deliver' });
  });

  it('sends a 2.3.0 receiver its session without waiting for the Location (2.3.0 names it by id), and ClientInfo and charging profile results as they are', async () => {
    const out = await deliveryBody('session', '2.3.0', session, cpo, noLocation);
    assert.equal(out.ok, true);
    for (const kind of ['client_info', 'charging_profile_result', 'active_charging_profile'] as const) {
      const payload = { result: 'ACCEPTED', hub_version_fields: { '2.3.0': { kept: { x: 1 } } } };
      assert.deepEqual(await deliveryBody(kind, '2.3.0', payload, cpo, noLocation), { ok: true, body: { result: 'ACCEPTED' } }, kind);
    }
  });
});
