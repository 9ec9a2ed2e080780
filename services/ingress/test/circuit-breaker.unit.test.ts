// The circuit breaker of the push path (src/circuit-breaker.ts, docs/decisions/0002-fast-refusals.md)
// on a fake clock: when it opens, that it refuses while open, lets exactly one probe through when
// half-open, and closes on an answer.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCircuitBreaker, type BreakerSettings, type BreakerTransition } from '../src/circuit-breaker.ts';

const settings: BreakerSettings = { failures: 3, openAfterMs: 1_000, cooldownMs: 500 };

function breaker(s: BreakerSettings = settings, mayOpen?: () => boolean) {
  const clock = { t: 10_000 };
  const transitions: BreakerTransition[] = [];
  const b = createCircuitBreaker(s, () => clock.t, (t) => transitions.push(t), mayOpen);
  const fail = (unavailable = true) => {
    const ticket = b.admit();
    assert.ok(ticket, `admitted while ${b.state}`);
    ticket.failed(unavailable);
  };
  return { b, clock, transitions, fail };
}

describe('circuit breaker', () => {
  it('stays closed on a burst of failures shorter than openAfterMs (a failover that recovers)', () => {
    const { b, clock, fail } = breaker();
    for (let i = 0; i < 50; i++) fail();
    clock.t += 999;
    fail();
    assert.equal(b.state, 'closed');
    b.admit()?.succeeded();
    clock.t += 5_000;
    fail(); // a new streak starts here
    assert.equal(b.state, 'closed');
  });

  it('opens once the streak has `failures` failures and has lasted openAfterMs', () => {
    const { b, clock, fail, transitions } = breaker();
    fail();
    clock.t += 2_000;
    fail();
    assert.equal(b.state, 'closed', 'two failures are fewer than three');
    fail();
    assert.equal(b.state, 'open');
    assert.deepEqual(transitions, [{ from: 'closed', to: 'open', failures: 3, refused: 0 }]);
  });

  it('a success in the streak starts it over', () => {
    const { b, clock, fail } = breaker();
    fail();
    fail();
    b.admit()?.succeeded();
    clock.t += 2_000;
    fail();
    fail();
    assert.equal(b.state, 'closed');
  });

  it('failures of calls that started before the latest success do not count (appends to a lost leader after a failover)', () => {
    const { b, clock, fail } = breaker();
    const stale = Array.from({ length: 10 }, () => b.admit());
    b.admit()?.succeeded();
    for (const t of stale) {
      clock.t += 500;
      t?.failed(true);
    }
    assert.equal(b.state, 'closed');
    fail();
    clock.t += 1_000;
    fail();
    fail();
    assert.equal(b.state, 'open', 'calls started after it count');
  });

  it('does not open while the caller vetoes it (a cluster whose brokers answer is failing over), and opens once it stops', () => {
    const veto = { on: true };
    const { b, clock, fail } = breaker(settings, () => !veto.on);
    for (let i = 0; i < 10; i++) {
      fail();
      clock.t += 500;
    }
    assert.equal(b.state, 'closed');
    veto.on = false;
    fail();
    assert.equal(b.state, 'open', 'the streak went on meanwhile');
    clock.t += 500;
    veto.on = true;
    b.admit()?.failed(true);
    assert.equal(b.state, 'closed', 'a failed probe closes it while vetoed: pushes wait for the failover');
  });

  it('never opens on failures that are not unavailability (a bad input), and they end a streak', () => {
    const { b, clock, fail } = breaker();
    fail();
    fail();
    for (let i = 0; i < 20; i++) {
      clock.t += 1_000;
      fail(false);
    }
    fail();
    assert.equal(b.state, 'closed');
  });

  it('refuses every call while open, then lets exactly one probe through when half-open', () => {
    const { b, clock, fail } = breaker();
    fail();
    clock.t += 1_000;
    fail();
    fail();
    assert.equal(b.state, 'open');
    assert.equal(b.admit(), undefined);
    clock.t += 499;
    assert.equal(b.admit(), undefined);
    clock.t += 1;
    assert.equal(b.state, 'half-open');
    const probe = b.admit();
    assert.ok(probe?.probe, 'the first call after the cool-down is the probe');
    for (let i = 0; i < 10; i++) assert.equal(b.admit(), undefined, 'no second call while the probe is in flight');
    clock.t += 60_000;
    assert.equal(b.admit(), undefined, 'still one probe, however long it takes');
    probe.succeeded();
    assert.equal(b.state, 'closed');
    const next = b.admit();
    assert.ok(next && !next.probe);
  });

  it('a probe that fails with unavailability opens it for another cool-down', () => {
    const { b, clock, fail, transitions } = breaker();
    fail();
    clock.t += 1_000;
    fail();
    fail();
    clock.t += 500;
    b.admit()?.failed(true);
    assert.equal(b.state, 'open');
    clock.t += 499;
    assert.equal(b.admit(), undefined);
    clock.t += 1;
    const probe = b.admit();
    assert.ok(probe?.probe);
    probe.succeeded();
    assert.deepEqual(
      transitions.map((t) => `${t.from}>${t.to}`),
      ['closed>open', 'open>half-open', 'half-open>open', 'open>half-open', 'half-open>closed'],
    );
    assert.equal(transitions.at(-1)?.refused, 1, 'the refusals while open are reported on closing');
  });

  it('a probe answered with another failure (the dependency answered) closes it', () => {
    const { b, clock, fail } = breaker();
    fail();
    clock.t += 1_000;
    fail();
    fail();
    clock.t += 500;
    b.admit()?.failed(false);
    assert.equal(b.state, 'closed');
  });

  it('late failures of calls admitted before it opened neither extend nor reopen it', () => {
    const { b, clock, fail } = breaker();
    const late = [b.admit(), b.admit(), b.admit()];
    fail();
    clock.t += 1_000;
    fail();
    fail();
    assert.equal(b.state, 'open');
    clock.t += 500;
    const probe = b.admit();
    assert.ok(probe?.probe);
    for (const t of late) t?.failed(true);
    assert.equal(b.state, 'half-open', 'only the probe decides');
    assert.equal(b.admit(), undefined);
    probe.succeeded();
    assert.equal(b.state, 'closed');
  });

  it('a probe reporting after its half-open period ended is an ordinary call', () => {
    const { b, clock, fail } = breaker();
    const late = b.admit();
    fail();
    clock.t += 1_000;
    fail();
    fail();
    clock.t += 500;
    const first = b.admit();
    assert.ok(first?.probe);
    late?.succeeded(); // an answer from before: closes it, the probe is no longer one
    assert.equal(b.state, 'closed');
    fail();
    clock.t += 1_000;
    fail();
    fail();
    clock.t += 500;
    const second = b.admit();
    assert.ok(second?.probe);
    first.failed(true);
    assert.equal(b.state, 'half-open', 'the old probe does not decide for the new one');
    second.succeeded();
    assert.equal(b.state, 'closed');
  });

  it('a ticket reports once', () => {
    const { b } = breaker({ failures: 1, openAfterMs: 0, cooldownMs: 1_000 });
    const t = b.admit();
    t?.succeeded();
    t?.failed(true);
    assert.equal(b.state, 'closed');
  });
});
