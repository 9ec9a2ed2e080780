// A circuit breaker around one dependency of the push path (docs/decisions/0002-fast-refusals.md).
// Pure: no I/O and no timers; time comes from the clock it is given, so the unit tests drive it with a
// fake one. The caller asks admit() before the dependency call and reports the outcome on the ticket.
//
// - closed: every call goes through. It opens once a streak of unavailability failures (no success in
//   between) has at least `failures` of them and has lasted `openAfterMs` from its first failure. A
//   leader failover in a 3-broker cluster fails the appends of a few seconds and then succeeds again:
//   the success ends the streak before it opens the breaker (test/cluster/broker-loss.cluster.test.ts).
// - open: every call is refused at once, until `cooldownMs` have passed since it opened.
// - half-open: one call (the probe) goes through, the others are refused. The probe's success closes
//   the breaker; its unavailability failure opens it again for another cool-down.
//
// Only failures the caller classifies as unavailability count (a timeout, a lost connection); any
// other outcome, a partner's bad input included, says the dependency answered and counts as success.
// A failure of a call that started before the latest success is old news and does not count: after a
// failover the appends sent to the lost leader keep timing out for a while after the new one answers.
// `mayOpen` lets the caller veto opening with what it knows of the dependency: a Kafka cluster whose
// brokers still answer is in a leader failover, and pushes wait for it as before.

export type BreakerState = 'closed' | 'open' | 'half-open';

export interface BreakerSettings {
  /** Unavailability failures in a row (no success between) before the breaker may open. */
  readonly failures: number;
  /** How long such a streak must have lasted, from its first failure, before the breaker opens. */
  readonly openAfterMs: number;
  /** How long the breaker stays open before it lets one probe through. */
  readonly cooldownMs: number;
}

export interface BreakerTransition {
  readonly from: BreakerState;
  readonly to: BreakerState;
  /** Failures in the streak that opened it (0 when closing or half-opening). */
  readonly failures: number;
  /** Calls refused while it was open or half-open (when it closes). */
  readonly refused: number;
}

/** What a caller reports for one admitted call. Only its first report counts. */
export interface BreakerTicket {
  /** Whether this call is the half-open probe. */
  readonly probe: boolean;
  succeeded(): void;
  /** The call failed; `unavailable` says whether the failure means the dependency is unavailable. */
  failed(unavailable: boolean): void;
}

export interface CircuitBreaker {
  /** The state now (an open breaker whose cool-down has passed reads as half-open). */
  readonly state: BreakerState;
  /** A ticket for the call, or undefined: refuse it now without calling the dependency. */
  admit(): BreakerTicket | undefined;
}

// Long because: one state machine whose transitions share its state (streak, opened at, probe in
// flight, period); each transition is a few lines.
export function createCircuitBreaker(
  settings: BreakerSettings,
  now: () => number,
  onTransition: (t: BreakerTransition) => void = () => undefined,
  mayOpen: () => boolean = () => true,
): CircuitBreaker {
  let state: BreakerState = 'closed';
  let streak = 0;
  let streakStartedAt = 0;
  let openedAt = 0;
  let probeInFlight = false;
  let refused = 0;
  /** Successes so far: a ticket remembers the count it was admitted at. */
  let successes = 0;
  /** Counts half-open periods, so a probe reporting after its period ended is an ordinary call. */
  let period = 0;

  const move = (to: BreakerState, failures = 0) => {
    const from = state;
    if (from === to) return;
    state = to;
    onTransition({ from, to, failures, refused: to === 'closed' ? refused : 0 });
    if (to === 'closed' || to === 'open') probeInFlight = false;
    if (to === 'half-open') period++;
    if (to === 'closed') refused = 0;
  };
  const current = (): BreakerState => {
    if (state === 'open' && now() - openedAt >= settings.cooldownMs) move('half-open');
    return state;
  };
  const open = (failures: number) => {
    openedAt = now();
    streak = 0;
    move('open', failures);
  };
  const success = () => {
    successes++;
    streak = 0;
    // Any call that got an answer, probe or not, shows the dependency is back.
    move('closed');
  };
  const failure = (probe: boolean) => {
    if (probe) return mayOpen() ? open(1) : move('closed');
    if (state !== 'closed') return; // calls admitted before it opened, failing late: it is open already
    if (streak === 0) streakStartedAt = now();
    streak++;
    if (streak >= settings.failures && now() - streakStartedAt >= settings.openAfterMs && mayOpen()) open(streak);
  };

  return {
    get state() {
      return current();
    },
    admit() {
      const s = current();
      if (s === 'open' || (s === 'half-open' && probeInFlight)) {
        refused++;
        return undefined;
      }
      const probe = s === 'half-open';
      if (probe) probeInFlight = true;
      const probePeriod = period;
      const successesAtAdmission = successes;
      const stillProbe = () => probe && state === 'half-open' && period === probePeriod;
      let reported = false;
      const report = (fn: () => void) => {
        if (reported) return;
        reported = true;
        fn();
      };
      return {
        probe,
        succeeded: () => report(success),
        failed: (unavailable) =>
          report(() => {
            if (!unavailable) success();
            else if (stillProbe() || successes === successesAtAdmission) failure(stillProbe());
          }),
      };
    },
  };
}
