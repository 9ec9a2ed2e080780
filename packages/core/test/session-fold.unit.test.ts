// Session PATCH events folded into full sessions (src/session-fold.ts; mod_sessions.asciidoc, PATCH
// Method): merged into the newest full session, in batch order, newest wins as for PUT.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mergeSessionPatch } from '../src/session-patch.ts';
import { foldSessionEvents, type StoredSession } from '../src/session-fold.ts';
import type { DeliveryInput } from '../src/delivery-records.ts';
import { cpo, emsp, fullSession, sessionPatch, sessionPut } from './session-events.fixture.ts';

type Json = Record<string, unknown>;
const full = fullSession;
const put = sessionPut;
const patch = sessionPatch;
const stored = (id: string, offset: number, payload: Json, sourceTime = String(payload['last_updated'])): StoredSession => ({ emsp, cpo, objectId: id, partition: 0, offset: String(offset), sourceTime, payload });

describe('foldSessionEvents', () => {
  it('merges a PATCH into the stored session and emits the full session for its eMSP, at the PATCH offset', () => {
    const base = full('S1', '2026-01-01T10:00:00.000Z', { charging_periods: [{ start_date_time: '2026-01-01T10:00:00Z', dimensions: [] }] });
    const p = { kwh: 3, status: 'COMPLETED', charging_periods: [{ start_date_time: '2026-01-01T10:05:00Z', dimensions: [] }], last_updated: '2026-01-01T10:05:00Z' };
    const fold = foldSessionEvents([patch('s1', 7, p)], [stored('S1', 3, base)], 'session');
    assert.equal(fold.applied, 1);
    assert.deepEqual(fold.unapplied, []);
    assert.equal(fold.rows.length, 1);
    const row = fold.rows[0] as DeliveryInput;
    // The stored row's id (case as first pushed) and eMSP; no patch flag: it is a full session now.
    assert.deepEqual({ emsp: row.emsp, objectId: row.objectId, offset: row.offset, patch: row.patch, correlationId: row.correlationId }, { emsp, objectId: 'S1', offset: '7', patch: undefined, correlationId: 'patch-7' });
    assert.deepEqual(row.payload, mergeSessionPatch(base, p));
    assert.equal((row.payload['charging_periods'] as unknown[]).length, 2);
  });

  it('takes the newest stored row as the base when the session has rows for several eMSPs', () => {
    const other = { countryCode: 'DE', partyId: 'OTH' };
    const older: StoredSession = { ...stored('S1', 2, full('S1', '2026-01-01T09:00:00.000Z', { kwh: 1 })), emsp: other };
    const fold = foldSessionEvents([patch('S1', 9, { status: 'COMPLETED', last_updated: '2026-01-01T10:10:00Z' })], [older, stored('S1', 5, full('S1', '2026-01-01T10:00:00.000Z', { kwh: 2 }))], 'session');
    assert.equal(fold.rows[0]?.payload['kwh'], 2);
    assert.deepEqual(fold.rows[0]?.emsp, emsp);
  });

  it('applies a batch in order: PUT then PATCH of one session, with nothing stored', () => {
    const fold = foldSessionEvents([put('S2', 1, full('S2', '2026-01-01T10:00:00Z')), patch('S2', 2, { kwh: 4, last_updated: '2026-01-01T10:01:00Z' })], [], 'session');
    assert.equal(fold.applied, 1);
    assert.deepEqual(fold.rows.map((r) => [r.offset, r.payload['kwh']]), [['1', 0], ['2', 4]]);
  });

  it('folds several PATCHes of a batch one onto the other', () => {
    const fold = foldSessionEvents(
      [patch('S3', 4, { kwh: 1, last_updated: '2026-01-01T10:01:00Z' }), patch('S3', 5, { status: 'COMPLETED', last_updated: '2026-01-01T10:02:00Z' })],
      [stored('S3', 1, full('S3', '2026-01-01T10:00:00.000Z'))],
      'session',
    );
    assert.deepEqual(fold.rows.at(-1)?.payload, { ...full('S3', '2026-01-01T10:02:00Z'), kwh: 1, status: 'COMPLETED' });
  });

  it('does not apply a PATCH older than the session held (newest wins, as for PUT); a tie goes to the later offset', () => {
    const base = stored('S4', 10, full('S4', '2026-01-01T10:05:00.000Z'));
    const older = foldSessionEvents([patch('S4', 11, { kwh: 9, last_updated: '2026-01-01T10:00:00Z' })], [base], 'session');
    assert.deepEqual(older.rows, []);
    assert.deepEqual(older.unapplied.map((u) => [u.reason, u.input.offset]), [['superseded', '11']]);
    const tie = foldSessionEvents([patch('S4', 11, { kwh: 9, last_updated: '2026-01-01T10:05:00Z' })], [base], 'session');
    assert.equal(tie.applied, 1);
  });

  it('lets a later PUT in the batch supersede a PATCH before it, and a PATCH after it merge into it', () => {
    const fold = foldSessionEvents(
      [patch('S5', 2, { kwh: 5, last_updated: '2026-01-01T10:01:00Z' }), put('S5', 3, full('S5', '2026-01-01T10:02:00Z', { kwh: 6 })), patch('S5', 4, { status: 'COMPLETED', last_updated: '2026-01-01T10:03:00Z' })],
      [stored('S5', 1, full('S5', '2026-01-01T10:00:00.000Z'))],
      'session',
    );
    assert.equal(fold.applied, 2);
    assert.deepEqual(fold.rows.at(-1)?.payload, { ...full('S5', '2026-01-01T10:03:00Z'), kwh: 6, status: 'COMPLETED' });
  });

  it('keeps a PATCH with no session to merge into out of the rows, reported as no-session', () => {
    const fold = foldSessionEvents([patch('S6', 1, { kwh: 1, last_updated: '2026-01-01T10:00:00Z' }), put('S6', 2, full('S6', '2026-01-01T10:01:00Z'))], [], 'session');
    assert.deepEqual(fold.rows.map((r) => r.offset), ['2']);
    assert.deepEqual(fold.unapplied.map((u) => [u.reason, u.input.offset]), [['no-session', '1']]);
  });

  it('matches a session id case-insensitively (a CiString) and never mixes CPOs', () => {
    const fold = foldSessionEvents([patch('s7', 2, { kwh: 1, last_updated: '2026-01-01T10:01:00Z' }), { ...patch('S7', 3, { kwh: 2, last_updated: '2026-01-01T10:02:00Z' }), cpo: { countryCode: 'NL', partyId: 'OTH' } }], [stored('S7', 1, full('S7', '2026-01-01T10:00:00.000Z'))], 'session');
    assert.deepEqual(fold.rows.map((r) => [r.objectId, r.payload['kwh']]), [['S7', 1]]);
    assert.deepEqual(fold.unapplied.map((u) => u.reason), ['no-session']);
  });

  it('routes the merged session to the eMSP a PATCHed cdr_token names, as a PUT of it would be', () => {
    const token = { country_code: 'de', party_id: 'new', uid: 'U2', type: 'RFID', contract_id: 'C2' };
    const fold = foldSessionEvents([patch('S8', 2, { cdr_token: token, last_updated: '2026-01-01T10:01:00Z' })], [stored('S8', 1, full('S8', '2026-01-01T10:00:00.000Z'))], 'session');
    assert.deepEqual(fold.rows[0]?.emsp, { countryCode: 'DE', partyId: 'NEW' });
  });

  it('in a replay, makes the row holding a PATCH\'s version pending again as it is, and touches only that eMSP\'s sessions', () => {
    const base = stored('S9', 4, { ...full('S9', '2026-01-01T10:01:00.000Z'), charging_periods: [1, 2] });
    const replayed = foldSessionEvents([{ ...patch('S9', 4, { charging_periods: [2], last_updated: '2026-01-01T10:01:00Z' }), emsp }], [base], 'session', emsp);
    assert.deepEqual(replayed.rows.map((r) => [r.offset, r.payload]), [['4', base.payload]]);
    const other = foldSessionEvents([{ ...patch('S9', 4, { last_updated: '2026-01-01T10:01:00Z' }), emsp: { countryCode: 'DE', partyId: 'OTH' } }], [base], 'session', { countryCode: 'DE', partyId: 'OTH' });
    assert.deepEqual(other.rows, []);
  });
});
