// Retention deletes delivered rows through migration 022's partial index (docs/decisions/0006-retention.md):
// the kinds it prunes come from the delivery rules (prunedWhenDelivered), and its predicate must be the
// index's text for text, or each batch scans the table. A kind that becomes pruned needs a migration.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { PRUNED_DELIVERIES } from '../src/retention.ts';

describe('retention of delivered rows', () => {
  it('prunes the kinds whose rule says so, by the predicate of the index migration 022 built', () => {
    assert.match(PRUNED_DELIVERIES, /kind in \('session', 'cdr', 'command_result'\)/, 'sessions, CDRs and command results are pruned once delivered');
    const migration = readFileSync(new URL('../../../infra/migrations/022_retention_indexes.sql', import.meta.url), 'utf8');
    assert.ok(migration.includes(`where ${PRUNED_DELIVERIES};`), 'the partial index deliveries_delivered_at has the same predicate');
  });
});
