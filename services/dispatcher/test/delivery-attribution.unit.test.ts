// Attribution of a 2.1.1 session or CDR whose auth_id named no eMSP when it was received
// (delivery-attribution.ts): logic without I/O, the token read model and the row update stood in for
// by functions.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Delivery } from '@hub/core';
import { attribute, isUnattributed, type AttributionDeps } from '../src/delivery-attribution.ts';

const hub = { countryCode: 'NL', partyId: 'HUB' };
const cpo = { countryCode: 'BE', partyId: 'BEC' };
const parked = (authId: string, overrides: Partial<Delivery> = {}): Delivery => ({
  id: '7',
  kind: 'cdr',
  emsp: hub,
  cpo,
  objectId: 'C1',
  offset: '3',
  payload: { id: 'C1', cdr_token: { country_code: 'NL', party_id: 'HUB', uid: authId, type: 'OTHER', contract_id: authId }, hub_version_fields: { '2.1.1': { kept: {} } }, total_cost: { excl_vat: 4 } },
  correlationId: undefined,
  eventTime: new Date(0),
  state: 'pending',
  reason: undefined,
  attempts: 1,
  nextAttemptAt: new Date(0),
  lastError: undefined,
  createdAt: new Date(0),
  targetUrl: undefined,
  recipientRole: 'EMSP',
  fromHub: false,
  ...overrides,
});

function deps(tokens: Record<string, Array<Record<string, unknown>>>, taken = false): AttributionDeps & { reassigned: Array<[string, unknown, unknown]> } {
  const reassigned: Array<[string, unknown, unknown]> = [];
  return {
    reassigned,
    tokensByContractId: async (contractId) => tokens[contractId] ?? [],
    reassign: async (id, emsp, payload) => {
      if (taken) return 'taken';
      reassigned.push([id, emsp, payload]);
      return 'reassigned';
    },
  };
}

describe('attribution of a 2.1.1 record parked under the hub', () => {
  it('only a 2.1.1 session or CDR row whose cdr_token names the hub is unattributed', () => {
    assert.equal(isUnattributed(parked('04A2B3C4D5'), hub), true);
    assert.equal(isUnattributed(parked('04A2B3C4D5', { kind: 'session' }), hub), true);
    assert.equal(isUnattributed(parked('04A2B3C4D5', { emsp: { countryCode: 'DE', partyId: 'EMS' } }), hub), false);
    assert.equal(isUnattributed(parked('04A2B3C4D5', { kind: 'token', recipientRole: 'CPO' }), hub), false);
    // A 2.2.1 CPO that names the hub in cdr_token gets no guess: its record has no 2.1.1 fields.
    const { hub_version_fields: _f, ...plain } = parked('04A2B3C4D5').payload;
    assert.equal(isUnattributed(parked('04A2B3C4D5', { payload: plain }), hub), false);
  });

  it('stays parked, with a reason that does not show the auth_id, while no routed eMSP pushed the token', async () => {
    const d = deps({});
    const out = await attribute(parked('04A2B3C4D5'), d);
    assert.equal(out.ok, false);
    assert.ok(!out.ok && /no eMSP routed to BE\/BEC pushed a token/.test(out.reason) && !out.reason.includes('04A2B3C4D5'));
    assert.deepEqual(d.reassigned, []);
  });

  it('is given to the eMSP that pushed a token with the auth_id as contract_id, with that token as cdr_token and every other field as it was', async () => {
    const d = deps({ '04A2B3C4D5': [{ country_code: 'de', party_id: 'ems', uid: 'RFID1', type: 'RFID', contract_id: '04A2B3C4D5' }] });
    const out = await attribute(parked('04A2B3C4D5'), d);
    assert.ok(out.ok);
    assert.deepEqual(out.delivery.emsp, { countryCode: 'DE', partyId: 'EMS' });
    assert.deepEqual(out.delivery.payload['cdr_token'], { country_code: 'de', party_id: 'ems', uid: 'RFID1', type: 'RFID', contract_id: '04A2B3C4D5' });
    assert.deepEqual(out.delivery.payload['total_cost'], { excl_vat: 4 });
    assert.deepEqual(d.reassigned.map(([id, emsp]) => [id, emsp]), [['7', { countryCode: 'DE', partyId: 'EMS' }]]);
  });

  it('is given to the eMSP an eMA-ID names once it is one', async () => {
    const out = await attribute(parked('FR-XYZ-C00000001-1'), deps({}));
    assert.ok(out.ok && out.delivery.emsp.countryCode === 'FR' && out.delivery.emsp.partyId === 'XYZ');
  });

  it('stays parked as superseded when the eMSP already holds a row of the same object from a later push', async () => {
    const out = await attribute(parked('04A2B3C4D5', { kind: 'session' }), deps({ '04A2B3C4D5': [{ country_code: 'DE', party_id: 'EMS', uid: 'RFID1', type: 'RFID' }] }, true));
    assert.ok(!out.ok && /superseded: DE\/EMS holds a row of this session/.test(out.reason));
  });
});
