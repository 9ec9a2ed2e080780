// Never silently skip data: stored positions are checked against the topic as it
// is before a consumer seeks to them. Another cluster, fewer partitions, an end or start below the
// one seen before (a recreated topic) or a position beyond the end is a mismatch; a match binds.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TopicBinding } from '@hub/core';
import { checkPositions } from '../src/index.ts';

const topic = 'ocpi.locations.v1';
const observed = (clusterId: string, ranges: Array<[number, bigint, bigint]>) => ({ clusterId, ranges: new Map(ranges.map(([p, low, high]) => [p, { low, high }])) });
const binding = (clusterId: string, ends: bigint[], starts: bigint[] = ends.map(() => 0n)): TopicBinding => ({
  clusterId,
  partitions: ends.length,
  ends: new Map(ends.map((e, p) => [p, e])),
  starts: new Map(starts.map((s, p) => [p, s])),
});

describe('checkPositions', () => {
  it('positions within the topic of the bound cluster match, and the binding keeps the highest ends seen', () => {
    const { mismatches, binding: next } = checkPositions(topic, observed('A', [[0, 0n, 12n], [1, 0n, 5n]]), new Map([[0, 12n], [1, 3n]]), binding('A', [10n, 5n]));
    assert.deepEqual(mismatches, []);
    assert.deepEqual([...next.ends], [[0, 12n], [1, 5n]]);
    assert.equal(next.clusterId, 'A');
  });

  it('positions of another cluster are refused, whatever the offsets', () => {
    const { mismatches } = checkPositions(topic, observed('B', [[0, 0n, 100n]]), new Map([[0, 1n]]), binding('A', [50n]));
    assert.equal(mismatches.length, 1);
    assert.match(mismatches[0]?.reason ?? '', /taken from Kafka cluster A, the brokers are cluster B/);
  });

  it('a position beyond the end of its partition is refused, even with no binding yet (positions from before migration 015)', () => {
    const { mismatches } = checkPositions(topic, observed('A', [[0, 0n, 4n], [1, 0n, 9n]]), new Map([[0, 7n], [1, 9n]]), undefined);
    assert.equal(mismatches.length, 1);
    assert.match(mismatches[0]?.reason ?? '', /position 7 of partition 0 is beyond its end 4/);
  });

  it('an end or start below the one seen before, or another partition count, is a recreated topic', () => {
    assert.match(checkPositions(topic, observed('A', [[0, 0n, 3n]]), new Map(), binding('A', [8n]))?.mismatches[0]?.reason ?? '', /ends at 3, below the 8 seen before/);
    assert.match(checkPositions(topic, observed('A', [[0, 0n, 30n]]), new Map(), binding('A', [8n], [6n]))?.mismatches[0]?.reason ?? '', /starts at 0, below the 6 seen before/);
    assert.match(checkPositions(topic, observed('A', [[0, 0n, 30n], [1, 0n, 0n]]), new Map(), binding('A', [8n]))?.mismatches[0]?.reason ?? '', /had 1 partitions and now has 2/);
    assert.match(checkPositions(topic, observed('A', [[0, 0n, 30n]]), new Map([[3, 1n]]), undefined)?.mismatches[0]?.reason ?? '', /partition 3, which the topic does not have/);
  });

  it('a topic id other than the bound one is a recreated topic, even refilled past the old end with its start at 0', () => {
    const bound = { ...binding('A', [8n]), topicId: 'id-old' };
    const refilled = { ...observed('A', [[0, 0n, 30n]]), topicId: 'id-new' };
    assert.match(checkPositions(topic, refilled, new Map([[0, 8n]]), bound).mismatches[0]?.reason ?? '', /topic id was id-old and is now id-new: the topic was deleted and created again/);
    // The offsets alone let it pass: what the id adds.
    assert.deepEqual(checkPositions(topic, observed('A', [[0, 0n, 30n]]), new Map([[0, 8n]]), binding('A', [8n])).mismatches, []);
    // The same id matches and stays bound; a binding from before ids takes the one observed; ids unread keep the bound one.
    const same = checkPositions(topic, { ...observed('A', [[0, 0n, 30n]]), topicId: 'id-old' }, new Map([[0, 8n]]), bound);
    assert.deepEqual(same.mismatches, []);
    assert.equal(same.binding.topicId, 'id-old');
    assert.equal(checkPositions(topic, refilled, new Map(), binding('A', [8n])).binding.topicId, 'id-new');
    assert.equal(checkPositions(topic, observed('A', [[0, 0n, 30n]]), new Map(), bound).binding.topicId, 'id-old');
  });
});
