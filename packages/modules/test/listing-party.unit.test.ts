// Location list requests are limited per party (interface document, Limits): which party a request
// counts against.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Request } from 'express';
import { listingParty } from '../src/http/object-reads.ts';

const party = (countryCode: string, partyId: string, role: 'CPO' | 'EMSP') => ({ countryCode, partyId, role, platformId: 'p1', name: partyId, suspended: false, updatedAt: new Date(0) });
const request = (parties: ReturnType<typeof party>[], headers: Record<string, string> = {}) =>
  ({ caller: { platformId: 'p1', parties }, headers }) as unknown as Request;

describe('listingParty', () => {
  const platform = [party('NL', 'CPA', 'CPO'), party('NL', 'EMB', 'EMSP'), party('DE', 'EMA', 'EMSP')];

  it('is the party the OCPI-from headers name, when it is one of the caller’s (any case)', () => {
    assert.equal(listingParty(request(platform, { 'ocpi-from-country-code': 'nl', 'ocpi-from-party-id': 'emb' })), 'NL/EMB');
    assert.equal(listingParty(request(platform, { 'ocpi-from-country-code': 'DE', 'ocpi-from-party-id': 'EMA' })), 'DE/EMA');
  });

  it('is the caller’s first eMSP party otherwise, also when the headers name a party that is not the caller’s', () => {
    assert.equal(listingParty(request(platform)), 'DE/EMA');
    assert.equal(listingParty(request(platform, { 'ocpi-from-country-code': 'FR', 'ocpi-from-party-id': 'XXX' })), 'DE/EMA');
  });

  it('ignores a named CPO or suspended party: it buys no extra budget', () => {
    assert.equal(listingParty(request(platform, { 'ocpi-from-country-code': 'NL', 'ocpi-from-party-id': 'CPA' })), 'DE/EMA');
    const suspended = [party('NL', 'EMB', 'EMSP'), { ...party('DE', 'EMA', 'EMSP'), suspended: true }];
    assert.equal(listingParty(request(suspended, { 'ocpi-from-country-code': 'DE', 'ocpi-from-party-id': 'EMA' })), 'NL/EMB');
    assert.equal(listingParty(request(platform, { 'ocpi-from-country-code': '', 'ocpi-from-party-id': '' })), 'DE/EMA');
  });

  it('counts against the platform when the caller has no active eMSP party', () => {
    assert.equal(listingParty(request([party('NL', 'CPA', 'CPO')])), 'p1');
    assert.equal(listingParty(request([])), 'p1');
  });
});
