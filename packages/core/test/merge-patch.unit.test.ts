// The one PATCH rule (src/merge-patch.ts): carried fields replace, absent fields stay, null removes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mergePatch } from '../src/merge-patch.ts';

describe('mergePatch', () => {
  it('replaces the fields a PATCH carries and keeps the others', () => {
    assert.deepEqual(mergePatch({ a: 1, b: 2 }, { b: 3, c: 4 }), { a: 1, b: 3, c: 4 });
  });
  it('removes a field the PATCH carries as null (absent and null mean the same in OCPI)', () => {
    assert.deepEqual(mergePatch({ a: 1, b: { x: 1 } }, { b: null }), { a: 1 });
  });
  it('replaces nested objects and lists whole instead of merging them', () => {
    assert.deepEqual(mergePatch({ o: { x: 1, y: 2 }, l: [1, 2] }, { o: { x: 9 }, l: [] }), { o: { x: 9 }, l: [] });
  });
  it('leaves the stored object untouched', () => {
    const stored = Object.freeze({ a: 1 });
    assert.deepEqual(mergePatch(stored, { a: null }), {});
    assert.deepEqual(stored, { a: 1 });
  });
  it('merges the hub-private member a level deeper: what another version sent for other fields stays', () => {
    const stored = { name: 'A', hub_version_fields: { '2.1.1': { kept: { type: 'OTHER' }, derived: { time_zone: true } } } };
    const patched = mergePatch(stored, { name: 'B', hub_version_fields: { '2.1.1': { derived: { publish: true } } } });
    assert.deepEqual(patched, { name: 'B', hub_version_fields: { '2.1.1': { kept: { type: 'OTHER' }, derived: { time_zone: true, publish: true } } } });
    assert.deepEqual(mergePatch(stored, { hub_version_fields: { '2.1.1': { kept: { type: null }, derived: { time_zone: null } } } }), { name: 'A' });
  });
});
