// The recipient of a delivery comes from the event's ocpi-to, read in one place:
// the dispatcher's consumer and hubctl replay both call recipientOf.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { recipientOf } from '../src/recipient.ts';

describe('recipientOf', () => {
  it('reads the ocpi-to header ("CC/PID"), upper-cased', () => {
    assert.deepEqual(recipientOf({ to: 'nl/emp', data: {} }), { countryCode: 'NL', partyId: 'EMP' });
  });

  it('prefers ocpi-to over the payload cdr_token', () => {
    assert.deepEqual(recipientOf({ to: 'NL/EMP', data: { cdr_token: { country_code: 'BE', party_id: 'XYZ' } } }), { countryCode: 'NL', partyId: 'EMP' });
  });

  it('falls back to cdr_token for an event without the header', () => {
    assert.deepEqual(recipientOf({ data: { cdr_token: { country_code: 'be', party_id: 'xyz' } } }), { countryCode: 'BE', partyId: 'XYZ' });
  });

  it('falls back to cdr_token when the header is not a party ("/" from an empty token)', () => {
    assert.deepEqual(recipientOf({ to: '/', data: { cdr_token: { country_code: 'BE', party_id: 'XYZ' } } }), { countryCode: 'BE', partyId: 'XYZ' });
  });

  it('names nobody for a Session PATCH without header or cdr_token', () => {
    assert.equal(recipientOf({ data: { kwh: 1 } }), undefined);
    assert.equal(recipientOf({ data: { cdr_token: { country_code: 'BE' } } }), undefined);
  });
});
