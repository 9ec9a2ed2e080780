// Fetch sizes of the hub's consumers: a consumer holds one fetch decoded at a
// time, so these bound its memory; the client's own defaults are never used.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_FETCH_LIMITS, fetchLimits } from '../src/fetch-limits.ts';

describe('fetchLimits', () => {
  it('bounds a fetch to 4 MiB and a partition to 1 MiB when the consumer asks for nothing', () => {
    assert.deepEqual(fetchLimits(), { maxBytes: 4 * 1024 * 1024, maxBytesPerPartition: 1024 * 1024 });
    assert.deepEqual(fetchLimits({ maxBytes: undefined, maxBytesPerPartition: undefined }), DEFAULT_FETCH_LIMITS);
  });

  it('gives a consumer that sets only the partition size four partitions a fetch', () => {
    assert.deepEqual(fetchLimits({ maxBytesPerPartition: 256 * 1024 }), { maxBytes: 1024 * 1024, maxBytesPerPartition: 256 * 1024 });
  });

  it('never lets one partition bring more than the whole fetch', () => {
    assert.deepEqual(fetchLimits({ maxBytes: 512 * 1024 }), { maxBytes: 512 * 1024, maxBytesPerPartition: 512 * 1024 });
    assert.deepEqual(fetchLimits({ maxBytes: 2 * 1024 * 1024, maxBytesPerPartition: 8 * 1024 * 1024 }), { maxBytes: 2 * 1024 * 1024, maxBytesPerPartition: 2 * 1024 * 1024 });
  });
});
