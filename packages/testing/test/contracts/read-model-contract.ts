import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { locationEventTypes, tariffEventTypes, tokenEventTypes } from '@hub/events';
import type { PartyRole } from '@hub/ocpi';
import { pathSubject, tokenObjectId } from '@hub/modules';
import type { ProjectedRecord } from '@hub/core';
import { registerPlatform } from '../../src/fakes/index.ts';
import { freshParty, type Ports } from './world.ts';

// The read side of the ReadModelStore port: what an eMSP's list pull and detail GET see (interface
// document, Routing and Pagination), and what the push pre-checks ask.

let partition = 100;
const nextPartition = () => partition++;

function locationPut(cpo: PartyRole, id: string, offset: number, time: string, lastUpdated = '2026-01-01T10:00:00Z'): ProjectedRecord {
  const data = { country_code: cpo.countryCode, party_id: cpo.partyId, id, evses: [{ uid: 'E1', status: 'AVAILABLE', connectors: [{ id: '1' }], last_updated: lastUpdated }], last_updated: lastUpdated };
  return { offset: String(offset), type: locationEventTypes.locationPut, subject: pathSubject({ countryCode: cpo.countryCode, partyId: cpo.partyId, id }), data, time };
}

export function readModelContract(ports: Ports): void {
  describe('ReadModelStore (queries) contract', () => {
    const given = async () => {
      const cpo: PartyRole = { countryCode: 'NL', partyId: freshParty('C'), role: 'CPO' };
      const emsp: PartyRole = { countryCode: 'DE', partyId: freshParty('E'), role: 'EMSP' };
      const owner = await registerPlatform(ports().registry, { parties: [cpo] });
      const reader = await registerPlatform(ports().registry, { parties: [emsp] });
      const p = nextPartition();
      await ports().readModels.applyBatch('locations', p, [
        locationPut(cpo, 'B', 0, '2026-01-01T10:00:02Z', '2026-01-02T00:00:00Z'),
        locationPut(cpo, 'a', 1, '2026-01-01T10:00:01Z'),
        locationPut(cpo, 'C', 2, '2026-01-01T10:00:03Z'),
      ]);
      return { cpo, emsp, owner, reader, partition: p };
    };
    const ids = (docs: string[]) => docs.map((d) => (JSON.parse(d) as { id: string }).id);

    it('applies a batch once: its position moves past it, a second apply skips it', async () => {
      const { cpo, partition: p } = await given();
      assert.equal((await ports().readModels.positions('locations')).get(p), 3n);
      const again = await ports().readModels.applyBatch('locations', p, [locationPut(cpo, 'C', 2, '2026-01-01T10:00:03Z')]);
      assert.deepEqual([again.applied, again.skipped], [0, 1]);
    });

    it('an eMSP lists only routed CPOs’ objects, oldest first, paged, with the total; date filters by last_updated', async () => {
      const { cpo, emsp, reader } = await given();
      assert.deepEqual(await ports().readModels.listVisible('locations', reader.platformId, { offset: 0, limit: 10 }), { documentsJson: [], total: 0 });
      await ports().registry.setRoutingRule(emsp, cpo, true, []);
      const page = await ports().readModels.listVisible('locations', reader.platformId, { offset: 1, limit: 1 });
      assert.deepEqual([ids(page.documentsJson), page.total], [['B'], 3]);
      const all = await ports().readModels.listVisible('locations', reader.platformId, { offset: 0, limit: 10 });
      assert.deepEqual(ids(all.documentsJson), ['a', 'B', 'C']);
      const recent = await ports().readModels.listVisible('locations', reader.platformId, { offset: 0, limit: 10, dateFrom: new Date('2026-01-02T00:00:00Z') });
      assert.deepEqual([ids(recent.documentsJson), recent.total], [['B'], 1]);
      const before = await ports().readModels.listVisible('locations', reader.platformId, { offset: 0, limit: 10, dateTo: new Date('2026-01-02T00:00:00Z') });
      assert.equal(before.total, 2);
      await ports().registry.setSuspended(cpo, true, []);
      assert.equal((await ports().readModels.listVisible('locations', reader.platformId, { offset: 0, limit: 10 })).total, 0);
    });

    it('details: the owner and routed eMSPs see an object (ids case-insensitive), down to an EVSE or connector; others do not', async () => {
      const { cpo, emsp, owner, reader } = await given();
      const path = { countryCode: cpo.countryCode, partyId: cpo.partyId, id: 'A' };
      assert.equal((await ports().readModels.findVisible('locations', owner.platformId, path))?.['id'], 'a');
      assert.equal(await ports().readModels.findVisible('locations', reader.platformId, path), undefined);
      await ports().registry.setRoutingRule(emsp, cpo, true, []);
      assert.equal((await ports().readModels.findVisible('locations', reader.platformId, { ...path, evseUid: 'e1' }))?.['uid'], 'E1');
      assert.equal((await ports().readModels.findVisible('locations', reader.platformId, { ...path, evseUid: 'E1', connectorId: '1' }))?.['id'], '1');
      assert.equal(await ports().readModels.findVisible('locations', reader.platformId, { ...path, evseUid: 'E9' }), undefined);
    });

    it('exists and locationOwners answer the push and forward pre-checks', async () => {
      const { cpo, emsp } = await given();
      const path = { countryCode: cpo.countryCode, partyId: cpo.partyId, id: 'c' };
      assert.equal(await ports().readModels.exists('locations', path), true);
      assert.equal(await ports().readModels.exists('locations', { ...path, evseUid: 'E1', connectorId: '1' }), true);
      assert.equal(await ports().readModels.exists('locations', { ...path, evseUid: 'E2' }), false);
      assert.equal(await ports().readModels.exists('locations', { ...path, id: 'Z' }), false);
      assert.deepEqual(await ports().readModels.locationOwners('c', emsp), []);
      await ports().registry.setRoutingRule(emsp, cpo, true, []);
      assert.deepEqual(await ports().readModels.locationOwners('c', emsp), [{ countryCode: cpo.countryCode, partyId: cpo.partyId }]);
    });

    it('tokenOwners: the eMSPs routed to the CPO that hold the token uid of that type', async () => {
      const { cpo, emsp } = await given();
      const other: PartyRole = { countryCode: 'FR', partyId: freshParty('E'), role: 'EMSP' };
      await registerPlatform(ports().registry, { parties: [other] });
      const tokenPut = (owner: PartyRole, uid: string, type: string, offset: number): ProjectedRecord => {
        const data = { country_code: owner.countryCode, party_id: owner.partyId, uid, type, contract_id: 'C1', issuer: 'x', valid: true, whitelist: 'ALLOWED', last_updated: '2026-01-01T00:00:00Z' };
        return { offset: String(offset), type: tokenEventTypes.tokenPut, subject: pathSubject({ countryCode: owner.countryCode, partyId: owner.partyId, id: tokenObjectId(uid, type) }), data, time: '2026-01-01T00:00:00Z' };
      };
      await ports().readModels.applyBatch('tokens', nextPartition(), [tokenPut(emsp, 'tok-1', 'RFID', 0), tokenPut(other, 'TOK-1', 'RFID', 1), tokenPut(emsp, 'APP-1', 'APP_USER', 2)]);
      const owners = (uid: string, type?: string) => ports().readModels.tokenOwners(tokenObjectId(uid, type), cpo);
      assert.deepEqual(await owners('TOK-1'), [], 'no routed eMSP');
      await ports().registry.setRoutingRule(emsp, cpo, true, []);
      assert.deepEqual(await owners('Tok-1'), [{ countryCode: emsp.countryCode, partyId: emsp.partyId }], 'uid case-insensitive, type RFID by default');
      await ports().registry.setRoutingRule(other, cpo, true, []);
      assert.deepEqual(await owners('TOK-1', 'RFID'), [{ countryCode: emsp.countryCode, partyId: emsp.partyId }, { countryCode: other.countryCode, partyId: other.partyId }]);
      assert.deepEqual(await owners('APP-1'), [], 'a uid is unique per type only');
      assert.deepEqual(await owners('APP-1', 'app_user'), [{ countryCode: emsp.countryCode, partyId: emsp.partyId }]);
      await ports().registry.setRoutingRule(other, cpo, false, []);
      assert.deepEqual(await owners('TOK-1'), [{ countryCode: emsp.countryCode, partyId: emsp.partyId }], 'a disabled rule hides the eMSP');
    });

    it('a PATCH of an unknown location is rejected; a tariff DELETE removes it', async () => {
      const { cpo, owner } = await given();
      const p = nextPartition();
      const subject = pathSubject({ countryCode: cpo.countryCode, partyId: cpo.partyId, id: 'T1' });
      const patch = await ports().readModels.applyBatch('locations', p, [{ offset: '0', type: locationEventTypes.locationPatched, subject: pathSubject({ countryCode: cpo.countryCode, partyId: cpo.partyId, id: 'NOPE' }), data: { last_updated: '2026-01-03T00:00:00Z' }, time: '2026-01-03T00:00:00Z' }]);
      assert.equal(patch.rejected, 1);
      const tariff = { country_code: cpo.countryCode, party_id: cpo.partyId, id: 'T1', currency: 'EUR', elements: [], last_updated: '2026-01-01T00:00:00Z' };
      await ports().readModels.applyBatch('tariffs', p, [{ offset: '0', type: tariffEventTypes.tariffPut, subject, data: tariff, time: '2026-01-01T00:00:00Z' }]);
      assert.equal(await ports().readModels.exists('tariffs', { countryCode: cpo.countryCode, partyId: cpo.partyId, id: 't1' }), true);
      await ports().readModels.applyBatch('tariffs', p, [{ offset: '1', type: tariffEventTypes.tariffDeleted, subject, data: {}, time: '2026-01-02T00:00:00Z' }]);
      assert.equal(await ports().readModels.findVisible('tariffs', owner.platformId, { countryCode: cpo.countryCode, partyId: cpo.partyId, id: 'T1' }), undefined);
    });

    it('tokens are the eMSP’s: routed CPOs list and read them, by uid and type; the owner reads them, other eMSPs do not', async () => {
      const { cpo, emsp, owner: cpoPlatform, reader: emspPlatform } = await given();
      const other = await registerPlatform(ports().registry, { parties: [{ countryCode: 'FR', partyId: freshParty('E'), role: 'EMSP' }] });
      const p = nextPartition();
      const put = (uid: string, type: string, offset: number): ProjectedRecord => {
        const data = { country_code: emsp.countryCode, party_id: emsp.partyId, uid, type, contract_id: 'C1', issuer: 'I', valid: true, whitelist: 'ALLOWED', last_updated: '2026-01-01T10:00:00Z' };
        return { offset: String(offset), type: tokenEventTypes.tokenPut, subject: pathSubject({ countryCode: emsp.countryCode, partyId: emsp.partyId, id: tokenObjectId(uid, type) }), data, time: `2026-01-01T10:00:0${offset}Z` };
      };
      await ports().readModels.applyBatch('tokens', p, [put('t1', 'RFID', 0), put('t1', 'APP_USER', 1)]);
      const keys = (docs: string[]) => docs.map((d) => JSON.parse(d) as { uid: string; type: string }).map((t) => `${t.uid}|${t.type}`);
      assert.equal((await ports().readModels.listVisible('tokens', cpoPlatform.platformId, { offset: 0, limit: 10 })).total, 0);
      await ports().registry.setRoutingRule(emsp, cpo, true, []);
      const all = await ports().readModels.listVisible('tokens', cpoPlatform.platformId, { offset: 0, limit: 10 });
      assert.deepEqual([keys(all.documentsJson), all.total], [['t1|RFID', 't1|APP_USER'], 2]);
      assert.equal((await ports().readModels.listVisible('tokens', emspPlatform.platformId, { offset: 0, limit: 10 })).total, 0, 'an eMSP lists no tokens');
      const path = { countryCode: emsp.countryCode, partyId: emsp.partyId, id: tokenObjectId('T1', 'APP_USER') };
      assert.equal((await ports().readModels.findVisible('tokens', cpoPlatform.platformId, path))?.['type'], 'APP_USER');
      assert.equal((await ports().readModels.findVisible('tokens', emspPlatform.platformId, path))?.['type'], 'APP_USER');
      assert.equal(await ports().readModels.findVisible('tokens', other.platformId, path), undefined);
      assert.equal(await ports().readModels.exists('tokens', { ...path, id: tokenObjectId('t1', 'OTHER') }), false);
    });
  });
}
