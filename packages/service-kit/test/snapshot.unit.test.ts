import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { HubEvent } from '@hub/events';
import { appendSnapshot, changePositionIn } from '../src/snapshot.ts';

// docs/decisions/0014-snapshot-topics.md: the header a snapshot record carries, and the chunks the
// projector appends them in.
describe('snapshot records', () => {
  it('a record reflects the position of its own partition, whether its header names one partition or every one', () => {
    assert.equal(changePositionIn('3:120', 3), 120n);
    assert.equal(changePositionIn('0:5,1:17,2:0,3:42', 1), 17n);
    assert.equal(changePositionIn('0:5,1:17', 2), undefined, 'no entry for the record\'s partition: it says nothing');
    assert.equal(changePositionIn('3:120', 2), undefined, 'a projector record from another partition (partition counts differ)');
    assert.equal(changePositionIn('x:1', 0), undefined);
    assert.equal(changePositionIn(undefined, 0), undefined);
  });

  it('appends whole objects in chunks a broker takes (about 768 KiB), in order', async () => {
    const appended: HubEvent[][] = [];
    const log = { append: async (_topic: string, events: readonly HubEvent[]) => void appended.push([...events]) };
    const big = { id: 'L', last_updated: '2024-01-01T00:00:00Z', name: 'x'.repeat(100_000) };
    const changes = Array.from({ length: 20 }, (_, i) => ({ path: { countryCode: 'NL', partyId: 'BEN', id: `L${i}` }, partition: 0, nextOffset: BigInt(i + 1), document: { ...big, id: `L${i}` }, createdAt: undefined }));
    await appendSnapshot(log, 'locations', changes, 'test');
    assert.ok(appended.length >= 3, `${appended.length} appends`);
    assert.ok(appended.every((chunk) => chunk.reduce((n, e) => n + JSON.stringify(e.data).length, 0) <= 768 * 1024));
    assert.deepEqual(appended.flat().map((e) => e.key), changes.map((c) => `NL/BEN/${c.path.id}`));
    assert.deepEqual(appended.flat().map((e) => e.changePosition), changes.map((c) => `0:${c.nextOffset}`));
  });
});
