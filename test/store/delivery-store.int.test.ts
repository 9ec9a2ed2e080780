// Delivery rows on real Postgres: which version of a session or CDR a row holds when events arrive
// late, twice, from another partition, or are replayed (reference design, Delivery rules).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { postgresDeliveryStore } from '@hub/store';
import type { DeliveryInput, DeliveryStore } from '@hub/core';
import { givenTestStack } from '@hub/testing';

const emsp = { countryCode: 'NL', partyId: 'EMS' };
const cpo = { countryCode: 'NL', partyId: 'CPO' };

function session(id: string, offset: number, lastUpdated: string, status: string, partition = 0): DeliveryInput {
  return {
    kind: 'session',
    emsp,
    cpo,
    objectId: id,
    partition,
    offset: String(offset),
    payload: { id, status, last_updated: lastUpdated },
    correlationId: undefined,
    eventTime: '2026-01-01T00:00:00Z',
  };
}

describe('delivery store on Postgres: newest wins', () => {
  const given = givenTestStack('delivery_store');
  const store = (): DeliveryStore => postgresDeliveryStore(given.stack.pool);

  const row = async (kind: string, id: string) =>
    (await given.stack.pool.query<{ status: string; state: string; source_offset: string }>(
      "select payload->>'status' as status, state, source_offset from deliveries where kind = $1 and object_id = $2",
      [kind, id],
    )).rows[0];

  it('keeps the newer session state when an older one reaches Kafka later (a push refused by a timeout that landed anyway)', async () => {
    await store().enqueue([session('S1', 10, '2026-01-01T10:05:00Z', 'COMPLETED')]);
    await store().enqueue([session('S1', 20, '2026-01-01T10:00:00Z', 'ACTIVE')]);
    assert.equal((await row('session', 'S1'))?.status, 'COMPLETED');
    // Both in one batch, in either order.
    await store().enqueue([session('S2', 31, '2026-01-01T10:00:00', 'ACTIVE'), session('S2', 30, '2026-01-01T10:05:00Z', 'COMPLETED')]);
    assert.equal((await row('session', 'S2'))?.status, 'COMPLETED');
  });

  it('takes a later session state even from another partition or a recreated topic (a lower offset)', async () => {
    await store().enqueue([session('S3', 500, '2026-01-01T10:00:00Z', 'ACTIVE', 3)]);
    await store().enqueue([session('S3', 2, '2026-01-01T10:07:00Z', 'COMPLETED', 9)]);
    assert.equal((await row('session', 'S3'))?.status, 'COMPLETED');
    // Same last_updated: the offset decides; the same event again changes nothing.
    await store().enqueue([session('S3', 3, '2026-01-01T10:07:00Z', 'COMPLETED', 9)]);
    assert.equal((await row('session', 'S3'))?.source_offset, '3');
    await store().enqueue([session('S3', 3, '2026-01-01T10:07:00Z', 'COMPLETED', 9)]);
    assert.equal((await row('session', 'S3'))?.source_offset, '3');
  });

  it('keeps the ActiveChargingProfile the Charge Point calculated last (start_date_time), whatever order it came in', async () => {
    // mod_charging_profiles.asciidoc, ActiveChargingProfile class: start_date_time is when it was calculated.
    const profile = (offset: number, startDateTime: string, limit: number): DeliveryInput => ({
      kind: 'active_charging_profile',
      emsp,
      cpo,
      objectId: 'SESSION-ACP',
      partition: 0,
      offset: String(offset),
      payload: { start_date_time: startDateTime, charging_profile: { charging_rate_unit: 'A', charging_profile_period: [{ start_period: 0, limit }] } },
      correlationId: undefined,
      eventTime: '2026-01-01T00:00:00Z',
    });
    const limit = async () => ((await given.stack.pool.query<{ limit: number }>(
      "select (payload->'charging_profile'->'charging_profile_period'->0->>'limit')::int as limit from deliveries where kind = 'active_charging_profile' and object_id = 'SESSION-ACP'",
    )).rows[0])?.limit;
    await store().enqueue([profile(40, '2026-01-01T10:05:00Z', 16)]);
    await store().enqueue([profile(41, '2026-01-01T10:00:00Z', 32)]);
    assert.equal(await limit(), 16, 'an earlier calculation appended later does not replace the later one');
    await store().enqueue([profile(43, '2026-01-01T10:06:00Z', 8), profile(42, '2026-01-01T10:09:00Z', 10)]);
    assert.equal(await limit(), 10, 'in one batch too');
  });

  it('delivers a CDR appended twice once; an operator replay makes it pending again', async () => {
    const cdr = (offset: number): DeliveryInput => ({ ...session('C1', offset, '2026-01-01T11:00:00Z', 'n/a'), kind: 'cdr', payload: { id: 'C1', last_updated: '2026-01-01T11:00:00Z' } });
    await store().enqueue([cdr(40)]);
    const [claimed] = (await store().claimDue(100, new Map(), 10, 30_000)).filter((d) => d.kind === 'cdr');
    assert.ok(claimed);
    await store().delivered(claimed.id, claimed.offset);
    assert.equal((await row('cdr', 'C1'))?.state, 'delivered');
    await store().enqueue([cdr(41)]); // the same CDR appended again (a CPO retry after a timeout)
    assert.equal((await row('cdr', 'C1'))?.state, 'delivered');
    assert.equal(await store().enqueueForced([cdr(40)]), 1);
    assert.equal((await row('cdr', 'C1'))?.state, 'pending');
  });
});

describe('delivery store on Postgres: received CDRs', () => {
  const given = givenTestStack('cdr_receipts');
  const store = (): DeliveryStore => postgresDeliveryStore(given.stack.pool);

  it('of two different CDRs posted at once under one id, one is new and the other a conflict (never a second append)', async () => {
    for (let i = 0; i < 20; i++) {
      const cdr = (hash: string) => ({ countryCode: 'NL', partyId: 'CPO', id: `RACE-${i}`, contentHash: hash, document: { id: `RACE-${i}`, hash } });
      const receipts = await Promise.all([store().receiveCdr(cdr('a')), store().receiveCdr(cdr('b'))]);
      assert.deepEqual([...receipts].sort(), ['conflict', 'new'], `round ${i}`);
    }
  });

  it('a CDR id in another case is the same CDR (CiString): the same content a duplicate, other content a conflict', async () => {
    const cdr = (id: string, hash: string) => ({ countryCode: 'NL', partyId: 'CPO', id, contentHash: hash, document: { id } });
    assert.equal(await store().receiveCdr(cdr('Case-1', 'h1')), 'new');
    await store().markCdrAppended(cdr('CASE-1', 'h1'));
    assert.equal(await store().receiveCdr(cdr('case-1', 'h1')), 'duplicate');
    assert.equal(await store().receiveCdr(cdr('CASE-1', 'h2')), 'conflict');
    assert.deepEqual(await store().findCdr(cdr('cAsE-1', 'h1')), { id: 'Case-1' });
  });

  it('the same CDR posted again before its append completed is retried, after it a duplicate', async () => {
    const cdr = { countryCode: 'NL', partyId: 'CPO', id: 'AGAIN', contentHash: 'h', document: { id: 'AGAIN' } };
    assert.equal(await store().receiveCdr(cdr), 'new');
    assert.equal(await store().receiveCdr(cdr), 'retry-append');
    await store().markCdrAppended(cdr);
    assert.equal(await store().receiveCdr(cdr), 'duplicate');
  });
});

describe('delivery store on Postgres: consumer positions', () => {
  const given = givenTestStack('delivery_positions');
  const store = (): DeliveryStore => postgresDeliveryStore(given.stack.pool);

  it('stores the position with the rows, also for a batch that made no row, and never moves it back', async () => {
    const position = (partition: number, nextOffset: number) => ({ consumerGroup: 'dispatcher', topic: 't.sessions', partition, nextOffset: String(nextOffset) });
    await store().enqueue([session('P1', 4, '2026-01-01T10:00:00Z', 'ACTIVE')], position(0, 5));
    await store().enqueue([], position(1, 7));
    await store().enqueue([session('P1', 2, '2026-01-01T09:00:00Z', 'ACTIVE')], position(0, 3)); // a re-read of older records
    assert.deepEqual(Object.fromEntries(await store().deliveryPositions('dispatcher', 't.sessions')), { 0: 5n, 1: 7n });
    assert.deepEqual(Object.fromEntries(await store().deliveryPositions('other-group', 't.sessions')), {});
  });

  it('re-drives dead and unroutable rows only: a claimed pending row keeps its claim (no second send in flight)', async () => {
    await store().enqueue([session('R1', 1, '2026-01-01T10:00:00Z', 'ACTIVE')]);
    const [claimed] = (await store().claimDue(100, new Map(), 10, 60_000)).filter((d) => d.objectId === 'R1');
    assert.ok(claimed);
    assert.equal(await store().redrive({ states: ['pending'], id: claimed.id }), 0);
    const { rows } = await given.stack.pool.query<{ claimed: boolean }>('select claimed_until > now() as claimed from deliveries where id = $1', [claimed.id]);
    assert.equal(rows[0]?.claimed, true);
  });
});

describe('delivery store on Postgres: claiming eMSP by eMSP', () => {
  const given = givenTestStack('delivery_claims');
  const store = (): DeliveryStore => postgresDeliveryStore(given.stack.pool);
  const forEmsp = (partyId: string, id: string): DeliveryInput => ({ ...session(id, 1, '2026-01-01T10:00:00Z', 'ACTIVE'), emsp: { countryCode: 'NL', partyId } });
  const claimedBy = (claimed: readonly { emsp: { partyId: string } }[]) =>
    claimed.reduce<Record<string, number>>((counts, d) => ({ ...counts, [d.emsp.partyId]: (counts[d.emsp.partyId] ?? 0) + 1 }), {});

  it('gives every eMSP with due rows its free slots, also behind an eMSP whose rows are all waiting for a retry', async () => {
    // AAA sorts first and has nothing due (down, backing off); BBB has more due rows than its cap;
    // CCC has two deliveries in flight already, so one free slot of its cap of three.
    await store().enqueue([...['A1', 'A2'].map((id) => forEmsp('AAA', id)), ...['B1', 'B2', 'B3', 'B4', 'B5'].map((id) => forEmsp('BBB', id)), ...['C1', 'C2', 'C3'].map((id) => forEmsp('CCC', id))]);
    await given.stack.pool.query("update deliveries set next_attempt_at = now() + interval '1 hour' where emsp_party_id = 'AAA'");
    const first = await store().claimDue(100, new Map([['NL/CCC', 2]]), 3, 60_000);
    assert.deepEqual(claimedBy(first), { BBB: 3, CCC: 1 });
    // Claimed rows are not claimed again; the rest of each eMSP's due rows are.
    const second = await store().claimDue(100, new Map(), 3, 60_000);
    assert.deepEqual(claimedBy(second), { BBB: 2, CCC: 2 });
    assert.deepEqual(claimedBy(await store().claimDue(100, new Map(), 3, 60_000)), {});
  });
});

describe('delivery store on Postgres: batches of several partitions in one statement', () => {
  const given = givenTestStack('delivery_joined');
  const position = (partition: number, nextOffset: number) => ({ consumerGroup: 'dispatcher', topic: 't.cdrs', partition, nextOffset: String(nextOffset) });
  const cdrRow = (id: string, partition: number, offset: number, payload: Record<string, unknown> = { id }): DeliveryInput => ({ ...session(id, offset, '2026-01-01T11:00:00Z', 'n/a', partition), kind: 'cdr', payload });
  const created = async (ids: readonly string[]) =>
    (await given.stack.pool.query<{ object_id: string; created_at: Date }>('select object_id, created_at from deliveries where object_id = any($1::text[]) order by object_id', [ids])).rows;

  it('writes the batches of partitions consumed at once in one commit, with each partition position', async () => {
    const store = postgresDeliveryStore(given.stack.pool);
    const first = store.enqueue([cdrRow('J0', 0, 1)], position(0, 2));
    await Promise.all([store.enqueue([cdrRow('J1', 1, 5), cdrRow('J2', 1, 6)], position(1, 7)), store.enqueue([cdrRow('J3', 2, 9)], position(2, 10)), store.enqueue([], position(3, 4))]);
    await first;
    const rows = await created(['J0', 'J1', 'J2', 'J3']);
    assert.deepEqual(rows.map((r) => r.object_id), ['J0', 'J1', 'J2', 'J3']);
    assert.equal(new Set(rows.filter((r) => r.object_id !== 'J0').map((r) => r.created_at.getTime())).size, 1);
    assert.deepEqual(Object.fromEntries(await store.deliveryPositions('dispatcher', 't.cdrs')), { 0: 2n, 1: 7n, 2: 10n, 3: 4n });
  });

  it('fails only the batch whose record Postgres refuses: the other partitions rows and positions are stored', async () => {
    const store = postgresDeliveryStore(given.stack.pool);
    const first = store.enqueue([cdrRow('K0', 4, 1)], position(4, 2));
    // jsonb has no \u0000: the record is refused (22P05) and its partition's consumer quarantines it.
    const results = await Promise.allSettled([store.enqueue([cdrRow('K1', 5, 3)], position(5, 4)), store.enqueue([cdrRow('KBAD', 6, 8, { id: 'KBAD', note: 'nul\u0000' })], position(6, 9)), store.enqueue([cdrRow('K2', 7, 1)], position(7, 2))]);
    await first;
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.deepEqual((await created(['K0', 'K1', 'KBAD', 'K2'])).map((r) => r.object_id), ['K0', 'K1', 'K2']);
    const positions = await store.deliveryPositions('dispatcher', 't.cdrs');
    assert.deepEqual([positions.get(5), positions.get(6), positions.get(7)], [4n, undefined, 2n]);
  });
});
