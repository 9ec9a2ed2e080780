// A Session PATCH merged into the full Session (src/session-patch.ts; mod_sessions.asciidoc, PATCH Method).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mergePatch } from '../src/merge-patch.ts';
import { mergeSessionPatch } from '../src/session-patch.ts';

const period = (start: string, kwh: number) => ({ start_date_time: start, dimensions: [{ type: 'ENERGY', volume: kwh }] });

describe('mergeSessionPatch', () => {
  const stored = Object.freeze({
    id: 'S1',
    kwh: 1,
    status: 'ACTIVE',
    total_cost: { excl_vat: 0.2, incl_vat: 0.24 },
    charging_periods: Object.freeze([period('2026-01-01T10:00:00Z', 1)]),
    last_updated: '2026-01-01T10:00:00Z',
  });

  it('is the one PATCH rule for every field but charging_periods (replace, keep, null removes)', () => {
    const patch = { kwh: 5, status: 'COMPLETED', total_cost: null, last_updated: '2026-01-01T10:05:00Z' };
    assert.deepEqual(mergeSessionPatch(stored, patch), mergePatch(stored, patch));
    assert.deepEqual(mergeSessionPatch(stored, patch), {
      id: 'S1',
      kwh: 5,
      status: 'COMPLETED',
      charging_periods: [period('2026-01-01T10:00:00Z', 1)],
      last_updated: '2026-01-01T10:05:00Z',
    });
  });

  it('adds the charging periods a PATCH carries to the stored list (mod_sessions.asciidoc, PATCH Method)', () => {
    const merged = mergeSessionPatch(stored, { charging_periods: [period('2026-01-01T10:05:00Z', 2), period('2026-01-01T10:10:00Z', 3)], last_updated: '2026-01-01T10:10:00Z' });
    assert.deepEqual(merged['charging_periods'], [period('2026-01-01T10:00:00Z', 1), period('2026-01-01T10:05:00Z', 2), period('2026-01-01T10:10:00Z', 3)]);
    // The stored session is not changed in place.
    assert.equal(stored.charging_periods.length, 1);
  });

  it('starts the list when the stored session has none', () => {
    const { charging_periods: _, ...withoutPeriods } = stored;
    assert.deepEqual(mergeSessionPatch(withoutPeriods, { charging_periods: [period('2026-01-01T10:05:00Z', 2)], last_updated: 'x' })['charging_periods'], [period('2026-01-01T10:05:00Z', 2)]);
  });

  it('leaves the list as it is for an empty list, and never removes it (null): that takes a PUT', () => {
    assert.deepEqual(mergeSessionPatch(stored, { charging_periods: [], last_updated: 'x' })['charging_periods'], stored.charging_periods);
    assert.deepEqual(mergeSessionPatch(stored, { charging_periods: null, last_updated: 'x' })['charging_periods'], stored.charging_periods);
  });
});
