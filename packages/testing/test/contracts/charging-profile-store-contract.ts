import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { freshParty, type Ports } from './world.ts';

// The ChargingProfileStore port: a set, get or clear request's life from the eMSP to its result, the
// hub's timeout answer or a late result (mod_charging_profiles.asciidoc, Receiver interface), and the
// parties of a session the hub delivered.

export function chargingProfileStoreContract(ports: Ports): void {
  describe('ChargingProfileStore contract', () => {
    const parties = () => ({ emsp: { countryCode: 'DE', partyId: freshParty('E') }, cpo: { countryCode: 'NL', partyId: freshParty('C') } });
    const create = async (operation: 'SET' | 'GET' | 'CLEAR' = 'SET') => {
      const id = randomUUID();
      const { emsp, cpo } = parties();
      await ports().chargingProfiles.create({ id, operation, sessionId: 'S1', emsp, cpo, responseUrl: 'https://emsp.example/cp', correlationId: 'c1' });
      return { id, emsp, cpo };
    };

    it('a result for a waiting request is forwarded once; then, or for an unknown or malformed id, unknown', async () => {
      const { id, emsp } = await create('GET');
      await ports().chargingProfiles.answered(id, true, 30, 5);
      const first = await ports().chargingProfiles.result(id, { result: 'ACCEPTED' });
      assert.deepEqual([first.outcome, first.request?.operation, first.request?.sessionId, first.request?.emsp, first.request?.responseUrl], ['forward', 'GET', 'S1', emsp, 'https://emsp.example/cp']);
      assert.equal((await ports().chargingProfiles.result(id, { result: 'ACCEPTED' })).outcome, 'unknown');
      assert.equal((await ports().chargingProfiles.result(randomUUID(), { result: 'ACCEPTED' })).outcome, 'unknown');
      assert.equal((await ports().chargingProfiles.result('not-a-uuid', { result: 'ACCEPTED' })).outcome, 'unknown');
      assert.deepEqual((await ports().chargingProfiles.get(id))?.result, { result: 'ACCEPTED' });
    });

    it('a request the CPO did not accept never times out', async () => {
      const { id } = await create();
      await ports().chargingProfiles.answered(id, false, 0, 0);
      await new Promise((r) => setTimeout(r, 20));
      assert.ok(!(await ports().chargingProfiles.expire()).some((r) => r.id === id));
    });

    it('an accepted request past its deadline times out; one late result is recorded, not forwarded', async () => {
      const { id } = await create('CLEAR');
      await ports().chargingProfiles.answered(id, true, 0, 0);
      await new Promise((r) => setTimeout(r, 20));
      assert.ok((await ports().chargingProfiles.expire()).some((r) => r.id === id && r.state === 'timed_out' && r.operation === 'CLEAR'));
      assert.equal((await ports().chargingProfiles.result(id, { result: 'ACCEPTED' })).outcome, 'late');
      assert.equal((await ports().chargingProfiles.result(id, { result: 'ACCEPTED' })).outcome, 'unknown');
      assert.deepEqual((await ports().chargingProfiles.get(id))?.lateResult, { result: 'ACCEPTED' });
    });

    it("finds a session's CPO among the sessions delivered to the eMSP, and its eMSP among the CPO's, whatever the id's case", async () => {
      const { emsp, cpo } = parties();
      const other = { countryCode: 'DE', partyId: freshParty('E') };
      await ports().deliveries.enqueue([{ kind: 'session', emsp, cpo, objectId: 'Sess-1', partition: 0, offset: '1', payload: { id: 'Sess-1', last_updated: '2026-01-01T00:00:00Z' }, correlationId: undefined, eventTime: '2026-01-01T00:00:00Z' }]);
      assert.deepEqual(await ports().chargingProfiles.sessionCpos(emsp, 'SESS-1'), [cpo]);
      assert.deepEqual(await ports().chargingProfiles.sessionCpos(other, 'Sess-1'), [], "another eMSP's session is none of its own");
      assert.deepEqual(await ports().chargingProfiles.sessionEmsps(cpo, 'sess-1'), [emsp]);
      assert.deepEqual(await ports().chargingProfiles.sessionEmsps(cpo, 'S2'), []);
    });
  });
}
