// The settle window a re-append of a CDR waits (docs/decisions/0003-each-cdr-once.md) against what the
// brokers let a timed-out append still do: an operator whose window is too short is told at start.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkCdrSettleWindow, shortCdrSettleWindow } from '../src/cdrs/cdr-event.ts';

describe('the CDR settle window against the brokers', () => {
  it('is long enough by default: 60 s against a 10 s append timeout and Kafka\'s default 30 s replica lag (10 + 45 s)', () => {
    assert.equal(shortCdrSettleWindow(60, 10_000, 30_000), undefined);
  });

  it('is too short at 30 s against the same brokers, and says what to set', () => {
    const advice = shortCdrSettleWindow(30, 5_000, 30_000);
    assert.match(advice ?? '', /CDR_RELAY_AFTER_SECONDS=30 .* = 50 s: .*twice; set it above 50/);
  });

  it('says nothing when the brokers do not disclose the setting', async () => {
    assert.equal(shortCdrSettleWindow(1, 10_000, undefined), undefined);
    const warnings: string[] = [];
    await checkCdrSettleWindow({ brokerSetting: async () => undefined }, 1, 10_000, (m) => warnings.push(m));
    await checkCdrSettleWindow({ brokerSetting: () => Promise.reject(new Error('denied')) }, 1, 10_000, (m) => warnings.push(m));
    assert.equal(warnings.length, 0, warnings.join("; "));
    await checkCdrSettleWindow({ brokerSetting: async () => '30000' }, 30, 5_000, (m) => warnings.push(m));
    assert.equal(warnings.length, 1);
  });
});
