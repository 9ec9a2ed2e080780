// Partner health with hysteresis (src/health.ts; docs/decisions/0005-partner-health-hysteresis.md).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { healthAfterProbe, IMMEDIATE_HEALTH, type HealthState } from '../src/health.ts';

const policy = { offlineAfter: 3, onlineAfter: 2 };
const run = (probes: boolean[], from?: HealthState) => {
  let state = from;
  const statuses: string[] = [];
  for (const ok of probes) {
    state = healthAfterProbe(state, ok, policy);
    statuses.push(state.status);
  }
  return statuses;
};

describe('healthAfterProbe', () => {
  it('a partner never probed takes its first probe', () => {
    assert.equal(healthAfterProbe(undefined, true, policy).status, 'CONNECTED');
    assert.equal(healthAfterProbe(undefined, false, policy).status, 'OFFLINE');
  });

  it('goes OFFLINE only after offlineAfter failed probes in a row, CONNECTED after onlineAfter good ones', () => {
    assert.deepEqual(run([true, false, false, false, true, true]), ['CONNECTED', 'CONNECTED', 'CONNECTED', 'OFFLINE', 'OFFLINE', 'CONNECTED']);
  });

  it('a flapping partner (every other probe fails) stays CONNECTED', () => {
    assert.deepEqual(new Set(run([true, false, true, false, true, false, true, false])), new Set(['CONNECTED']));
  });

  it('an OFFLINE partner with one good probe between failures stays OFFLINE', () => {
    assert.deepEqual(run([false, true, false, true, false]), ['OFFLINE', 'OFFLINE', 'OFFLINE', 'OFFLINE', 'OFFLINE']);
  });

  it('counts the streaks', () => {
    const s = healthAfterProbe(healthAfterProbe({ status: 'CONNECTED', failures: 0, successes: 5 }, false, policy), false, policy);
    assert.deepEqual(s, { status: 'CONNECTED', failures: 2, successes: 0 });
  });

  it('IMMEDIATE_HEALTH decides on every probe', () => {
    assert.equal(healthAfterProbe({ status: 'CONNECTED', failures: 0, successes: 9 }, false, IMMEDIATE_HEALTH).status, 'OFFLINE');
    assert.equal(healthAfterProbe({ status: 'OFFLINE', failures: 9, successes: 0 }, true, IMMEDIATE_HEALTH).status, 'CONNECTED');
  });
});
