import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { registerPlatform } from '../../src/fakes/index.ts';
import { freshParty, type Ports } from './world.ts';

// The CommandStore port: a command's life from the request to its result, TIMEOUT or late result
// (mod_commands.asciidoc; interface document, Commands).

export function commandStoreContract(ports: Ports): void {
  describe('CommandStore contract', () => {
    const parties = () => ({ emsp: { countryCode: 'DE', partyId: freshParty('E') }, cpo: { countryCode: 'NL', partyId: freshParty('C') } });
    const create = async (command = 'START_SESSION', extra: { reservationId?: string } = {}) => {
      const id = randomUUID();
      const { emsp, cpo } = parties();
      await ports().commands.create({ id, command, emsp, cpo, responseUrl: 'https://emsp.example/cb', correlationId: 'c1', ...extra });
      return { id, emsp, cpo };
    };

    it('a result for a waiting command is forwarded once; then, or for an unknown or malformed id, unknown', async () => {
      const { id, emsp } = await create();
      await ports().commands.answered(id, true, 30, 5);
      const first = await ports().commands.result(id, { result: 'ACCEPTED' });
      assert.equal(first.outcome, 'forward');
      assert.deepEqual(first.command?.emsp, emsp);
      assert.equal(first.command?.state, 'result');
      assert.equal((await ports().commands.result(id, { result: 'ACCEPTED' })).outcome, 'unknown');
      assert.equal((await ports().commands.result(randomUUID(), { result: 'ACCEPTED' })).outcome, 'unknown');
      assert.equal((await ports().commands.result('not-a-uuid', { result: 'ACCEPTED' })).outcome, 'unknown');
      assert.deepEqual((await ports().commands.get(id))?.result, { result: 'ACCEPTED' });
    });

    it('a result may beat the immediate answer; the answer then changes nothing', async () => {
      const { id } = await create();
      assert.equal((await ports().commands.result(id, { result: 'ACCEPTED' })).outcome, 'forward');
      await ports().commands.answered(id, false, 0, 0);
      assert.equal((await ports().commands.get(id))?.state, 'result');
    });

    it('an accepted command past its deadline times out; one late result is recorded, not forwarded', async () => {
      const { id } = await create();
      await ports().commands.answered(id, true, 0, 0);
      await new Promise((r) => setTimeout(r, 20));
      assert.ok((await ports().commands.expire()).some((c) => c.id === id && c.state === 'timed_out'));
      assert.equal((await ports().commands.result(id, { result: 'ACCEPTED' })).outcome, 'late');
      assert.equal((await ports().commands.result(id, { result: 'ACCEPTED' })).outcome, 'unknown');
      assert.deepEqual((await ports().commands.get(id))?.lateResult, { result: 'ACCEPTED' });
    });

    it('finds the CPO of a reservation the eMSP made, and of a session delivered to it', async () => {
      const { emsp, cpo } = await create('RESERVE_NOW', { reservationId: 'R1' });
      assert.deepEqual(await ports().commands.reservationCpo(emsp, 'R1'), cpo);
      assert.equal(await ports().commands.reservationCpo(emsp, 'R2'), undefined);
      await ports().deliveries.enqueue([{ kind: 'session', emsp, cpo, objectId: 'S1', partition: 0, offset: '1', payload: { id: 'S1', last_updated: '2026-01-01T00:00:00Z' }, correlationId: undefined, eventTime: '2026-01-01T00:00:00Z' }]);
      assert.deepEqual(await ports().commands.sessionCpo(emsp, 'S1'), cpo);
      assert.equal(await ports().commands.sessionCpo(emsp, 'S2'), undefined);
    });

    it('registered hosts: the versions URL’s and the endpoints’ host:port, lower-case', async () => {
      const { platformId } = await registerPlatform(ports().registry, {
        parties: [{ countryCode: 'DE', partyId: freshParty('E'), role: 'EMSP' }],
        versionsUrl: 'https://Versions.example/ocpi/versions',
        endpoints: [{ identifier: 'sessions', role: 'RECEIVER', url: 'https://emsp.example:8443/sessions' }],
      });
      assert.deepEqual((await ports().commands.registeredHosts(platformId)).sort(), ['emsp.example:8443', 'versions.example']);
    });
  });
}
