// One cached-target helper for the dispatcher's delivery targets and the ingress's token forwards
//: answers kept for a moment, refusals not kept, and keys that never repeat (a
// command's response_url) swept instead of kept for good.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cachedLookup } from '../src/routing.ts';

describe('cachedLookup', () => {
  it('asks once per key within the ttl and again after it', async () => {
    let clock = 0;
    let calls = 0;
    const lookup = cachedLookup(2_000, async (k: string) => `${k}${++calls}`, (k) => k, () => true, () => clock);
    assert.equal(await lookup.get('a'), 'a1');
    clock = 1_999;
    assert.equal(await lookup.get('a'), 'a1');
    clock = 2_000;
    assert.equal(await lookup.get('a'), 'a2');
  });

  it('does not keep an answer it is told not to keep', async () => {
    let calls = 0;
    const lookup = cachedLookup(2_000, async () => ++calls, (k: string) => k, () => false, () => 0);
    await lookup.get('a');
    await new Promise((r) => setImmediate(r));
    await lookup.get('a');
    assert.equal(calls, 2);
  });

  it('sweeps expired entries, so keys that never repeat do not pile up', async () => {
    let clock = 0;
    const lookup = cachedLookup(2_000, async (k: string) => k, (k) => k, () => true, () => clock);
    for (let i = 0; i < 100; i++) {
      clock += 100;
      await lookup.get(`https://emsp.example/response/${i}`);
    }
    // 100 distinct keys over 10 s with a 2 s ttl: only those of the last ttl (and one sweep) remain.
    assert.ok(lookup.size() <= 40, `kept ${lookup.size()} entries`);
  });
});
