// Read-model writes on real Postgres: several partitions' batches in one transaction, each exactly
// once (already-applied offsets skipped, positions moved only for partitions with new records),
// unreadable records kept as rejects, outcomes in the caller's order.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { locationEventTypes, tariffEventTypes } from '@hub/events';
import { pathSubject } from '@hub/modules';
import { createPool, postgresReadModelStore } from '@hub/store';
import { projectedRecord, type ProjectedRecord, type ReadModelStore } from '@hub/core';
import { createTestStack, type TestStack } from '@hub/testing';

const put = (offset: number, id: string, name: string): ProjectedRecord => ({
  offset: String(offset),
  type: locationEventTypes.locationPut,
  subject: pathSubject({ countryCode: 'NL', partyId: 'CPO', id }),
  data: { country_code: 'NL', party_id: 'CPO', id, name, last_updated: '2024-01-01T00:00:00Z' },
  time: `2024-01-01T00:00:${String(offset).padStart(2, '0')}Z`,
});
const patch = (offset: number, id: string, name: string): ProjectedRecord => ({
  offset: String(offset),
  type: locationEventTypes.locationPatched,
  subject: pathSubject({ countryCode: 'NL', partyId: 'CPO', id }),
  data: { name, last_updated: '2024-01-02T00:00:00Z' },
  time: '2024-01-02T00:00:00Z',
});

describe('read-model store on Postgres: applyBatches', () => {
  let stack: TestStack;
  let store: ReadModelStore;
  before(async () => {
    stack = await createTestStack('read_model_store');
    store = postgresReadModelStore(stack.pool);
  });
  after(async () => {
    await stack?.cleanup();
  });

  const nameOf = async (id: string) =>
    (await stack.pool.query<{ name: string }>("select document->>'name' as name from locations where generation = 1 and id = $1", [id])).rows[0]?.name;

  it('applies several partitions in one call, each at its own position, with outcomes in the caller’s order', async () => {
    const outcomes = await store.applyBatches('locations', [
      { partition: 2, records: [put(0, 'L2', 'two'), patch(1, 'L2', 'two patched')] },
      { partition: 0, records: [put(0, 'L0', 'zero')] },
    ]);
    assert.deepEqual(outcomes, [
      { applied: 2, skipped: 0, rejected: 0, superseded: 0, quarantined: 0 },
      { applied: 1, skipped: 0, rejected: 0, superseded: 0, quarantined: 0 },
    ]);
    assert.equal(await nameOf('L2'), 'two patched');
    assert.equal(await nameOf('L0'), 'zero');
    assert.deepEqual(Object.fromEntries(await store.positions('locations')), { 0: 1n, 2: 2n });
  });

  it('skips what a partition already applied and leaves a partition with nothing new where it was', async () => {
    const outcomes = await store.applyBatches('locations', [
      { partition: 0, records: [put(0, 'L0', 'redelivered')] },
      { partition: 2, records: [patch(1, 'L2', 'redelivered'), patch(2, 'L2', 'new')] },
    ]);
    assert.deepEqual(outcomes, [
      { applied: 0, skipped: 1, rejected: 0, superseded: 0, quarantined: 0 },
      { applied: 1, skipped: 1, rejected: 0, superseded: 0, quarantined: 0 },
    ]);
    assert.equal(await nameOf('L0'), 'zero');
    assert.equal(await nameOf('L2'), 'new');
    assert.deepEqual(Object.fromEntries(await store.positions('locations')), { 0: 1n, 2: 3n });
  });

  it('keeps an unreadable record and a PATCH of an unknown location as rejects and moves past them', async () => {
    const outcomes = await store.applyBatches('locations', [
      { partition: 1, records: [projectedRecord('0', undefined), patch(1, 'NOPE', 'x'), put(2, 'L1', 'one')] },
    ]);
    assert.deepEqual(outcomes, [{ applied: 1, skipped: 0, rejected: 2, superseded: 0, quarantined: 0 }]);
    const rejects = await stack.pool.query<{ offset: string; reason: string }>(`select "offset", reason from projection_rejects where model = 'locations' and partition = 1 order by "offset"`);
    assert.deepEqual(rejects.rows.map((r) => r.offset), ['0', '1']);
    assert.equal((await store.positions('locations')).get(1), 3n);
  });

  it('a batch that cannot be written changes nothing, in any partition of its transaction', async () => {
    const before = Object.fromEntries(await store.positions('locations'));
    const noLastUpdated = { ...put(3, 'L0', 'bad'), data: { country_code: 'NL', party_id: 'CPO', id: 'L0', name: 'bad' } };
    await assert.rejects(store.applyBatches('locations', [{ partition: 0, records: [noLastUpdated] }, { partition: 2, records: [patch(3, 'L2', 'lost with it')] }]));
    assert.deepEqual(Object.fromEntries(await store.positions('locations')), before);
    assert.equal(await nameOf('L2'), 'new');
  });

  it('reads a last_updated without a zone designator as UTC on a server in another time zone (types.asciidoc, DateTime)', async () => {
    await stack.pool.query(`alter database "${stack.name}" set timezone to 'Asia/Kolkata'`);
    const pool = createPool(stack.databaseUrl, { onIdleError: () => undefined });
    try {
      const zoneless = { ...put(40, 'TZ1', 'zone-less'), data: { country_code: 'NL', party_id: 'CPO', id: 'TZ1', name: 'zone-less', last_updated: '2024-03-01T12:00:00' } };
      await postgresReadModelStore(pool).applyBatches('locations', [{ partition: 5, records: [zoneless] }]);
      const { rows } = await stack.pool.query<{ utc: boolean }>("select last_updated = '2024-03-01T12:00:00Z'::timestamptz as utc from locations where id = 'TZ1'");
      assert.equal(rows[0]?.utc, true);
    } finally {
      await pool.end();
      await stack.pool.query(`alter database "${stack.name}" reset timezone`);
    }
  });

  it('deletes a tariff; a PUT after the DELETE in the same batch creates it again; a DELETE of an unknown tariff is kept as a reject', async () => {
    const tariffPut = (offset: number, id: string): ProjectedRecord => ({
      offset: String(offset),
      type: tariffEventTypes.tariffPut,
      subject: pathSubject({ countryCode: 'NL', partyId: 'CPO', id }),
      data: { country_code: 'NL', party_id: 'CPO', id, currency: 'EUR', elements: [], last_updated: '2024-01-01T00:00:00Z' },
      time: `2024-01-01T00:00:0${offset}Z`,
    });
    const tariffDelete = (offset: number, id: string): ProjectedRecord => ({ ...tariffPut(offset, id), type: tariffEventTypes.tariffDeleted, data: {}, time: '2024-01-02T00:00:00Z' });
    const ids = async () => (await stack.pool.query<{ id: string }>('select id from tariffs where generation = 1 order by id')).rows.map((r) => r.id);
    await store.applyBatches('tariffs', [{ partition: 0, records: [tariffPut(0, 'T1'), tariffPut(1, 'T2')] }]);
    assert.deepEqual(await ids(), ['T1', 'T2']);
    const outcomes = await store.applyBatches('tariffs', [{ partition: 0, records: [tariffDelete(2, 'T1'), tariffDelete(3, 'T2'), tariffPut(4, 'T2'), tariffDelete(5, 'NOPE')] }]);
    assert.deepEqual(outcomes, [{ applied: 3, skipped: 0, rejected: 1, superseded: 0, quarantined: 0 }]);
    assert.deepEqual(await ids(), ['T2']);
    const rejects = await stack.pool.query<{ reason: string }>(`select reason from projection_rejects where model = 'tariffs'`);
    assert.deepEqual(rejects.rows.map((r) => r.reason), ['unknown tariff']);
    // Deleted and created again in one batch, T2 is a new tariff (as when the events come one per
    // batch, or in a replay): created when it was PUT again, not when it was first.
    const created = await stack.pool.query<{ created: string }>("select to_char(created_at at time zone 'UTC', 'HH24:MI:SS') as created from tariffs where id = 'T2'");
    assert.equal(created.rows[0]?.created, '00:00:04');
  });

  it('an event time Postgres cannot read neither fails the batch nor stalls the projection: the object takes its last_updated', async () => {
    const odd = { ...put(50, 'ODD1', 'odd time'), time: '0000-01-01T00:00:00Z' };
    assert.deepEqual(await store.applyBatches('locations', [{ partition: 6, records: [odd] }]), [{ applied: 1, skipped: 0, rejected: 0, superseded: 0, quarantined: 0 }]);
    const { rows } = await stack.pool.query<{ same: boolean }>("select created_at = last_updated as same from locations where id = 'ODD1'");
    assert.equal(rows[0]?.same, true);
  });

  it('refuses the same partition twice in one call', async () => {
    await assert.rejects(store.applyBatches('locations', [{ partition: 0, records: [] }, { partition: 0, records: [] }]), /bad batch coordinates/);
  });
});
