// The consumer quarantine on real Postgres (migration 013): a quarantined record is
// stored byte-exact in the same transaction (projector) or statement (dispatcher) as the position that
// moves past it, so a failed apply leaves neither; a record read again is counted, not duplicated;
// re-drive and discard move its state; a re-driven projector event never regresses a newer object.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { locationEventTypes } from '@hub/events';
import { pathSubject } from '@hub/modules';
import { NotApplicable, postgresDeliveryStore, postgresQuarantineStore, postgresReadModelStore } from '@hub/store';
import type { DeliveryInput, ProjectedRecord, QuarantineEntry } from '@hub/core';
import { givenTestStack } from '@hub/testing';

const raw = (topic: string, partition: number, offset: number, value: Buffer = Buffer.from('{"x":1}')) => ({
  topic,
  partition,
  offset: String(offset),
  key: Buffer.from(`NL/CPO/K\u0000${offset}`),
  value,
  headers: { ce_type: Buffer.from('t'), binary: Buffer.from([0, 255, 254, 10]) },
});
const entry = (group: string, topic: string, partition: number, offset: number, value?: Buffer): QuarantineEntry => ({
  consumerGroup: group,
  record: raw(topic, partition, offset, value),
  ceType: 'type\u0000with NUL and \ud800',
  ceId: 'id-1',
  failureKind: 'record',
  reason: 'error 22008: date/time field value out of range',
});
const location = (offset: number, id: string, lastUpdated: string, quarantine?: QuarantineEntry): ProjectedRecord => ({
  offset: String(offset),
  type: locationEventTypes.locationPut,
  subject: pathSubject({ countryCode: 'NL', partyId: 'CPO', id }),
  data: { country_code: 'NL', party_id: 'CPO', id, name: id, last_updated: lastUpdated },
  time: '2026-01-01T00:00:00Z',
  ...(quarantine ? { quarantine } : {}),
});

describe('consumer quarantine on Postgres', () => {
  const given = givenTestStack('consumer_quarantine');
  const quarantine = () => postgresQuarantineStore(given.stack.pool);
  const readModels = () => postgresReadModelStore(given.stack.pool);
  const offsets = async () => Object.fromEntries((await readModels().positions('locations')).entries());

  it('projector: the quarantined record, the applied ones and the position move in one transaction; a failing batch leaves none of them', async () => {
    const poisonEntry = entry('projector', 'loc', 4, 1, Buffer.from([0x7b, 0x00, 0xff]));
    // Not flagged, the year-0 record fails the transaction: nothing of the batch stays.
    await assert.rejects(readModels().applyBatch('locations', 4, [location(0, 'A', '2026-01-01T00:00:00Z'), location(1, 'P', '0000-01-01T00:00:00Z'), location(2, 'B', '2026-01-01T00:00:00Z', entry('projector', 'loc', 4, 2))]), { code: '22008' });
    assert.deepEqual(await quarantine().list(), []);
    assert.equal((await offsets())[4], undefined, 'no position stored');
    // Flagged, it is quarantined and the others applied, the position past all three.
    const outcome = await readModels().applyBatch('locations', 4, [location(0, 'A', '2026-01-01T00:00:00Z'), location(1, 'P', '0000-01-01T00:00:00Z', poisonEntry), location(2, 'B', '2026-01-01T00:00:00Z')]);
    assert.deepEqual(outcome, { applied: 2, skipped: 0, rejected: 0, superseded: 0, quarantined: 1 });
    assert.equal((await offsets())[4], 3n);
    const [stored, ...more] = await quarantine().list();
    assert.equal(more.length, 0);
    assert.deepEqual(stored?.record, { ...raw('loc', 4, 1, Buffer.from([0x7b, 0x00, 0xff])) }, 'byte-exact key, value and headers');
    assert.equal(stored?.ceType, 'type\uFFFDwith NUL and \uFFFD');
    assert.equal(stored?.state, 'quarantined');
    // Read again (a crash before the Kafka commit, a replay of the partition): counted, not duplicated.
    await quarantine().insert([poisonEntry]);
    const again = await quarantine().list();
    assert.equal(again.length, 1);
    assert.equal(again[0]?.attempts, 2);
  });

  it('dispatcher: rows, position and quarantine in one statement; a row Postgres refuses leaves none', async () => {
    const deliveries = postgresDeliveryStore(given.stack.pool);
    const session = (id: string, offset: number, extra: Record<string, unknown> = {}): DeliveryInput => ({
      kind: 'session',
      emsp: { countryCode: 'NL', partyId: 'EMS' },
      cpo: { countryCode: 'NL', partyId: 'CPO' },
      objectId: id,
      partition: 7,
      offset: String(offset),
      payload: { id, last_updated: '2026-01-01T00:00:00Z', ...extra },
      correlationId: undefined,
      eventTime: '2026-01-01T00:00:00Z',
    });
    const position = (next: number) => ({ consumerGroup: 'dispatcher', topic: 'ses', partition: 7, nextOffset: String(next) });
    await assert.rejects(deliveries.enqueue([session('S1', 10), session('S2', 11, { meter_id: 'M\u0000' })], position(13), [entry('dispatcher', 'ses', 7, 12)]), { code: '22P05' });
    assert.deepEqual(await quarantine().list({ consumerGroup: 'dispatcher' }), []);
    assert.equal((await deliveries.deliveryPositions('dispatcher', 'ses')).size, 0);
    await deliveries.enqueue([session('S1', 10)], position(13), [entry('dispatcher', 'ses', 7, 11), entry('dispatcher', 'ses', 7, 12)]);
    assert.equal((await deliveries.deliveryPositions('dispatcher', 'ses')).get(7), 13n);
    assert.deepEqual((await quarantine().list({ consumerGroup: 'dispatcher' })).map((q) => q.record.offset), ['11', '12']);
    // A chunk of quarantined records only still moves the position.
    await deliveries.enqueue([], position(14), [entry('dispatcher', 'ses', 7, 13)]);
    assert.equal((await deliveries.deliveryPositions('dispatcher', 'ses')).get(7), 14n);
    assert.deepEqual(await quarantine().openCounts().then((c) => c.filter((x) => x.consumerGroup === 'dispatcher')), [{ consumerGroup: 'dispatcher', topic: 'ses', count: 3 }]);
  });

  it('re-drive requests, outcomes and discard move the state; only quarantined records are asked', async () => {
    const [first, second, third] = await quarantine().list({ consumerGroup: 'dispatcher' });
    assert.deepEqual(await quarantine().requestRedrive({ id: first?.id ?? '' }), [first?.id]);
    assert.deepEqual(await quarantine().requestRedrive({ id: first?.id ?? '' }), [], 'already asked');
    assert.deepEqual((await quarantine().pendingRedrives('dispatcher', 10)).map((r) => r.id), [first?.id]);
    await quarantine().resolveRedrive(first?.id ?? '', { state: 'quarantined', reason: 'still \u0000 refused' });
    assert.equal((await quarantine().get(first?.id ?? ''))?.state, 'quarantined');
    assert.equal((await quarantine().get(first?.id ?? ''))?.reason, 'still \uFFFD refused');
    assert.deepEqual((await quarantine().requestRedrive({ consumerGroup: 'dispatcher' })).length, 3);
    await quarantine().resolveRedrive(second?.id ?? '', { state: 'redriven' });
    assert.equal(await quarantine().discard(second?.id ?? ''), false, 'resolved already');
    assert.equal(await quarantine().discard(third?.id ?? ''), true);
    assert.deepEqual((await quarantine().list({ consumerGroup: 'dispatcher', states: ['redriven', 'discarded'] })).map((r) => r.state), ['redriven', 'discarded']);
  });

  it('a re-driven event applies unless the stored object is newer (superseded); one still inapplicable is refused', async () => {
    await readModels().applyBatch('locations', 5, [location(0, 'R', '2026-05-01T00:00:00Z')]);
    assert.equal(await readModels().redrive('locations', location(99, 'R', '2026-04-01T00:00:00Z')), 'superseded');
    assert.equal(await readModels().redrive('locations', location(99, 'R', '2026-06-01T00:00:00Z')), 'redriven');
    assert.equal(await readModels().redrive('locations', location(99, 'NEW', '2026-06-01T00:00:00Z')), 'redriven');
    const rows = await given.stack.pool.query<{ id: string; last_updated: Date }>("select id, last_updated from locations where id in ('R', 'NEW') order by id");
    assert.deepEqual(rows.rows.map((r) => [r.id, r.last_updated.toISOString()]), [['NEW', '2026-06-01T00:00:00.000Z'], ['R', '2026-06-01T00:00:00.000Z']]);
    await assert.rejects(readModels().redrive('locations', { ...location(99, 'GONE', '2026-06-01T00:00:00Z'), type: locationEventTypes.locationPatched }), NotApplicable);
    assert.equal((await offsets())[5], 1n, 'a re-drive moves no position');
  });
});
