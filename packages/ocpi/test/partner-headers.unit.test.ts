// The headers of a call to a partner in its version (partner-headers.ts): logic without I/O.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { partnerHeaders } from '../src/partner-headers.ts';

const route = { from: { countryCode: 'NL', partyId: 'CPO' }, to: { countryCode: 'DE', partyId: 'EMS' } };

describe('partnerHeaders', () => {
  it('gives a 2.1.1 partner its token as it is and no routing headers; a 2.2.1 one the routing headers', () => {
    assert.deepEqual(partnerHeaders('2.1.1', 'tok', route), { authorization: 'Token tok' });
    assert.deepEqual(partnerHeaders('2.2.1', 'tok', route), { 'ocpi-from-country-code': 'NL', 'ocpi-from-party-id': 'CPO', 'ocpi-to-country-code': 'DE', 'ocpi-to-party-id': 'EMS' });
  });
  it('sends no routing headers where the call takes none (Hub Client Info)', () => {
    assert.deepEqual(partnerHeaders('2.2.1', 'tok', undefined), {});
    assert.deepEqual(partnerHeaders('2.1.1', 'tok', undefined), { authorization: 'Token tok' });
  });
});
