// Session PATCH events turned into full delivery rows on real Postgres (src/session-fold.ts and the
// delivery store's enqueue; mod_sessions.asciidoc, PATCH Method): merged into the session held,
// newest wins as for PUT, a batch applied in its order, one PATCH rule (mergeSessionPatch).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mergeSessionPatch, type DeliveryStore } from '@hub/core';
import { postgresDeliveryStore } from '@hub/store';
import { givenTestStack } from '@hub/testing';
import { cpo, emsp, fullSession, sessionPatch, sessionPut } from '../../packages/core/test/session-events.fixture.ts';

type Json = Record<string, unknown>;
// A session held with a cost and one charging period, which PATCHes change or add to.
const full = (id: string, lastUpdated: string, extra: Json = {}): Json =>
  fullSession(id, lastUpdated, {
    total_cost: { excl_vat: 0.1, incl_vat: 0.12 },
    charging_periods: [{ start_date_time: '2026-01-01T10:00:00Z', dimensions: [{ type: 'ENERGY', volume: 1 }] }],
    ...extra,
  });
const put = sessionPut;
const patch = sessionPatch;

describe('delivery store on Postgres: session PATCH', () => {
  const given = givenTestStack('session_patch');
  const store = (): DeliveryStore => postgresDeliveryStore(given.stack.pool);
  const rows = async (id: string) =>
    (await given.stack.pool.query<{ emsp: string; object_id: string; payload: Json; state: string; source_offset: string }>(
      "select emsp_country_code || '/' || emsp_party_id as emsp, object_id, payload, state, source_offset from deliveries where kind = 'session' and upper(object_id) = upper($1) order by id",
      [id],
    )).rows;

  it('merges a PATCH into the session held (the one PATCH rule, charging periods added) and makes the row pending again', async () => {
    const base = full('S1', '2026-01-01T10:00:00Z');
    await store().enqueue([put('S1', 1, base)]);
    const [claimed] = (await store().claimDue(100, new Map(), 10, 30_000)).filter((d) => d.objectId === 'S1');
    assert.ok(claimed);
    await store().delivered(claimed.id, claimed.offset);
    assert.equal((await rows('S1'))[0]?.state, 'delivered');

    const p = { kwh: 2.5, status: 'COMPLETED', total_cost: null, charging_periods: [{ start_date_time: '2026-01-01T10:05:00Z', dimensions: [{ type: 'ENERGY', volume: 1.5 }] }], last_updated: '2026-01-01T10:05:00Z' };
    const report = await store().enqueue([patch('s1', 2, p)]);
    assert.deepEqual(report, { applied: 1, unapplied: [] });
    const [row] = await rows('S1');
    assert.deepEqual(row?.payload, mergeSessionPatch(base, p));
    assert.equal(row?.payload['total_cost'], undefined, 'null removes the field');
    assert.equal((row?.payload['charging_periods'] as unknown[]).length, 2);
    assert.deepEqual([row?.emsp, row?.object_id, row?.state, row?.source_offset], ['NL/EMS', 'S1', 'pending', '2']);
  });

  it('does not apply a PATCH older than the session held (newest wins), and reports it', async () => {
    await store().enqueue([put('S2', 1, full('S2', '2026-01-01T10:05:00Z', { kwh: 7 }))]);
    const report = await store().enqueue([patch('S2', 2, { kwh: 1, last_updated: '2026-01-01T10:00:00Z' })]);
    assert.equal(report.applied, 0);
    assert.deepEqual(report.unapplied.map((u) => u.reason), ['superseded']);
    assert.deepEqual([(await rows('S2'))[0]?.payload['kwh'], (await rows('S2'))[0]?.source_offset], [7, '1']);
  });

  it('applies PUT and PATCH of one session in one batch in their order', async () => {
    await store().enqueue([put('S3', 1, full('S3', '2026-01-01T10:00:00Z')), patch('S3', 2, { kwh: 3, last_updated: '2026-01-01T10:01:00Z' })]);
    assert.deepEqual([(await rows('S3'))[0]?.payload['kwh'], (await rows('S3'))[0]?.source_offset], [3, '2']);
    // PATCH then PUT: the later PUT (newer) replaces the merged session...
    await store().enqueue([patch('S3', 3, { kwh: 4, status: 'COMPLETED', last_updated: '2026-01-01T10:02:00Z' }), put('S3', 4, full('S3', '2026-01-01T10:03:00Z', { kwh: 5 }))]);
    assert.deepEqual([(await rows('S3'))[0]?.payload['kwh'], (await rows('S3'))[0]?.payload['status'], (await rows('S3'))[0]?.source_offset], [5, 'ACTIVE', '4']);
    // ...and a PUT older than the PATCH before it (a late push landing) does not.
    await store().enqueue([patch('S3', 5, { kwh: 6, last_updated: '2026-01-01T10:05:00Z' }), put('S3', 6, full('S3', '2026-01-01T10:04:00Z', { kwh: 0 }))]);
    assert.deepEqual([(await rows('S3'))[0]?.payload['kwh'], (await rows('S3'))[0]?.source_offset], [6, '5']);
  });

  it('keeps a PATCH with no session out of the rows and reports it (PATCH before PUT)', async () => {
    const report = await store().enqueue([patch('S4', 1, { kwh: 1, last_updated: '2026-01-01T10:00:00Z' })]);
    assert.deepEqual(report.unapplied.map((u) => u.reason), ['no-session']);
    assert.deepEqual(await rows('S4'), []);
    assert.equal(await store().sessionExists(cpo, 'S4'), false);
  });

  it('knows a session by its CPO and id in any case, not another CPO\'s', async () => {
    await store().enqueue([put('Sess-5', 1, full('Sess-5', '2026-01-01T10:00:00Z'))]);
    assert.equal(await store().sessionExists({ countryCode: 'nl', partyId: 'cpo' }, 'SESS-5'), true);
    assert.equal(await store().sessionExists({ countryCode: 'NL', partyId: 'OTH' }, 'Sess-5'), false);
  });

  it('a replay makes the row holding a PATCH pending again without merging it twice', async () => {
    await store().enqueue([put('S6', 1, full('S6', '2026-01-01T10:00:00Z')), patch('S6', 2, { charging_periods: [{ start_date_time: '2026-01-01T10:05:00Z', dimensions: [] }], last_updated: '2026-01-01T10:05:00Z' })]);
    const [claimed] = (await store().claimDue(100, new Map(), 10, 30_000)).filter((d) => d.objectId === 'S6');
    assert.ok(claimed);
    await store().delivered(claimed.id, claimed.offset);
    const before = (await rows('S6'))[0];
    assert.equal(before?.state, 'delivered');
    await store().enqueueForced([put('S6', 1, full('S6', '2026-01-01T10:00:00Z')), { ...patch('S6', 2, { charging_periods: [{ start_date_time: '2026-01-01T10:05:00Z', dimensions: [] }], last_updated: '2026-01-01T10:05:00Z' }), emsp }]);
    const after = (await rows('S6'))[0];
    assert.equal(after?.state, 'pending');
    assert.deepEqual(after?.payload, before?.payload);
  });
});
