import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { newEvent, topics } from '@hub/events';
import type { DeliveryInput } from '@hub/core';
import { freshParty, type Ports } from './world.ts';

// The EventLog (append side), RateLimiter and DeliveryStore (what the ingress uses) ports.

const sum = (offsets: Map<number, bigint>) => [...offsets.values()].reduce((a, b) => a + b, 0n);

export function eventLogContract(ports: Ports): void {
  describe('EventLog (append) contract', () => {
    it('an append of n events moves the topic’s heads by n in total; an empty append moves nothing', async () => {
      const before = sum(await ports().events.latestOffsets(topics.tariffs));
      const event = (i: number) => newEvent({ type: 'test.contract.v1', source: 'contract', subject: `s${i}`, key: `k${i}`, data: { i } });
      await ports().events.append(topics.tariffs, [event(1), event(2), event(3)]);
      assert.equal(sum(await ports().events.latestOffsets(topics.tariffs)) - before, 3n);
      await ports().events.append(topics.tariffs, []);
      assert.equal(sum(await ports().events.latestOffsets(topics.tariffs)) - before, 3n);
    });
  });
}

export function rateLimiterContract(ports: Ports): void {
  describe('RateLimiter contract', () => {
    it('allows `limit` hits a minute per scope and party, then refuses with a Retry-After within the minute', async () => {
      const party = `NL/${freshParty('X')}`;
      const decisions = [];
      for (let i = 0; i < 4; i++) decisions.push(await ports().rateLimiter.hit('contract', party, 3));
      assert.deepEqual(decisions.map((d) => [d.allowed, d.count]), [[true, 1], [true, 2], [true, 3], [false, 4]]);
      const refused = decisions[3];
      assert.ok(refused && refused.retryAfterSeconds >= 1 && refused.retryAfterSeconds <= 60);
      assert.equal((await ports().rateLimiter.hit('contract-other', party, 3)).count, 1);
      assert.equal((await ports().rateLimiter.hit('contract', `${party}-2`, 3)).count, 1);
    });
  });
}

export function deliveryStoreContract(ports: Ports): void {
  describe('DeliveryStore (CDR receipts, sessions held, positions) contract', () => {
    const cdrParty = freshParty('C');
    const cdrOf = (id: string, hash: string) => ({ countryCode: 'NL', partyId: cdrParty, id, contentHash: hash, document: { id } });

    it('a CDR is new, then retried until its append is marked, then a duplicate; another content is a conflict', async () => {
      const before = await ports().deliveries.unappendedCdrCount();
      assert.equal(await ports().deliveries.receiveCdr(cdrOf('R1', 'h1')), 'new');
      assert.equal(await ports().deliveries.unappendedCdrCount(), before + 1);
      assert.equal(await ports().deliveries.receiveCdr(cdrOf('R1', 'h1')), 'retry-append');
      assert.equal(await ports().deliveries.findCdr(cdrOf('R1', 'h1')), undefined);
      await ports().deliveries.markCdrAppended(cdrOf('R1', 'h1'));
      assert.equal(await ports().deliveries.unappendedCdrCount(), before);
      assert.equal(await ports().deliveries.receiveCdr(cdrOf('r1', 'h1')), 'duplicate');
      assert.equal(await ports().deliveries.receiveCdr(cdrOf('R1', 'h2')), 'conflict');
      assert.deepEqual(await ports().deliveries.findCdr(cdrOf('r1', 'h1')), { id: 'R1' });
    });

    it('a session is held once a row of its PUT is enqueued (ids case-insensitive); positions move with the rows', async () => {
      const cpo = { countryCode: 'NL', partyId: freshParty('C') };
      const row: DeliveryInput = { kind: 'session', emsp: { countryCode: 'DE', partyId: 'EMA' }, cpo, objectId: 'Sess1', partition: 0, offset: '7', payload: { id: 'Sess1', last_updated: '2026-01-01T00:00:00Z' }, correlationId: undefined, eventTime: '2026-01-01T00:00:00Z' };
      assert.equal(await ports().deliveries.sessionExists(cpo, 'SESS1'), false);
      const group = `contract-${randomUUID()}`;
      await ports().deliveries.enqueue([row], { consumerGroup: group, topic: 'sessions', partition: 0, nextOffset: '8' });
      assert.equal(await ports().deliveries.sessionExists(cpo, 'SESS1'), true);
      assert.equal(await ports().deliveries.sessionExists({ ...cpo, partyId: 'ZZZ' }, 'SESS1'), false);
      assert.deepEqual(await ports().deliveries.deliveryPositions(group, 'sessions'), new Map([[0, 8n]]));
    });

    it('a PATCH row alone does not make a session held', async () => {
      const cpo = { countryCode: 'NL', partyId: freshParty('C') };
      const patch: DeliveryInput = { kind: 'session', emsp: { countryCode: 'DE', partyId: 'EMA' }, cpo, objectId: 'P1', partition: 0, offset: '1', payload: { last_updated: '2026-01-01T00:00:00Z' }, correlationId: undefined, eventTime: '2026-01-01T00:00:00Z', patch: true };
      await ports().deliveries.enqueue([patch]);
      assert.equal(await ports().deliveries.sessionExists(cpo, 'P1'), false);
    });
  });
}
