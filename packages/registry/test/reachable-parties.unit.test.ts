// The parties an OCPI 2.3.0 hub lists among its Credentials roles for a caller
// (ocpi-2.3.0/credentials.asciidoc, Credentials object, NOTE): those routed to the caller's parties.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reachableParties } from '../src/credentials.ts';

const party = (role: 'CPO' | 'EMSP', countryCode: string, partyId: string, suspended = false) => ({ role, countryCode, partyId, name: `${countryCode}${partyId}`, suspended });
const rule = (emsp: [string, string], cpo: [string, string], enabled = true) => ({ emsp: { countryCode: emsp[0], partyId: emsp[1] }, cpo: { countryCode: cpo[0], partyId: cpo[1] }, enabled });

describe('reachableParties', () => {
  const emsp = party('EMSP', 'NL', 'EMS');
  const parties = [emsp, party('CPO', 'BE', 'CPA'), party('CPO', 'DE', 'CPB'), party('CPO', 'FR', 'CPC', true), party('CPO', 'AT', 'CPD'), party('EMSP', 'BE', 'CPA')];

  it("an eMSP's CPOs of enabled rules, not suspended, sorted; never its own parties", () => {
    const rules = [rule(['NL', 'EMS'], ['DE', 'CPB']), rule(['nl', 'ems'], ['be', 'cpa']), rule(['NL', 'EMS'], ['FR', 'CPC']), rule(['NL', 'EMS'], ['AT', 'CPD'], false), rule(['NL', 'EMS'], ['NL', 'EMS'])];
    assert.deepEqual(reachableParties([emsp], rules, parties), [
      { role: 'CPO', country_code: 'BE', party_id: 'CPA', business_details: { name: 'BECPA' } },
      { role: 'CPO', country_code: 'DE', party_id: 'CPB', business_details: { name: 'DECPB' } },
    ]);
  });

  it("a CPO's eMSPs; a party of the other role with the same ids is not routed by the rule", () => {
    const cpo = party('CPO', 'BE', 'CPA');
    assert.deepEqual(reachableParties([cpo], [rule(['NL', 'EMS'], ['BE', 'CPA'])], parties), [{ role: 'EMSP', country_code: 'NL', party_id: 'EMS', business_details: { name: 'NLEMS' } }]);
  });

  it('no rule: nobody', () => {
    assert.deepEqual(reachableParties([emsp], [], parties), []);
  });
});
