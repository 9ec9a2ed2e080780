import type { BreakerConfig } from '@hub/config';
import { DependencyUnavailable, settleWithin, type Dependency, type EventLog } from '@hub/core';
import { Counter, Gauge, type Logger, type Registry } from '@hub/observability';
import { createCircuitBreaker, type BreakerState, type CircuitBreaker } from './circuit-breaker.ts';

// The ingress's dependency calls on the push path behind a circuit breaker each (one for Kafka, one
// for Postgres): once the dependency is unavailable the ingress answers pushes 503 with Retry-After at
// once instead of holding every request for the append timeout (docs/decisions/0002-fast-refusals.md).
// The ports are wrapped here, in the ingress's composition; the adapters are unchanged.

/**
 * Refused without calling the dependency: its breaker is open. A DependencyUnavailable, so the error
 * middleware answers it exactly as a timeout (503, OCPI 3000, Retry-After: docs/reference/errors.md, UNAVAILABLE).
 */
export class DependencyRefused extends DependencyUnavailable {
  constructor(dependency: Dependency) {
    super(dependency, `${dependency === 'kafka' ? 'Kafka' : 'Postgres'} is unavailable; refused without waiting (circuit breaker open)`);
    this.name = 'DependencyRefused';
  }
}

/**
 * Whether a failure means the dependency is unavailable (a timeout, a lost or refused connection).
 * The adapters translate exactly those into DependencyUnavailable; a partner's bad input never is one.
 */
export function unavailability(err: unknown): boolean {
  // Contention (a deadlock, a serialization failure) is the store's answer from a Postgres that is up.
  return err instanceof DependencyUnavailable && !err.contention;
}

export interface DependencyGuard {
  readonly dependency: Dependency;
  readonly state: BreakerState;
  /** Runs call unless the breaker refuses it (DependencyRefused); its outcome feeds the breaker. */
  run<T>(call: () => Promise<T>): Promise<T>;
}

export interface GuardMetrics {
  readonly state: Gauge<'dependency'>;
  readonly refusals: Counter<'dependency'>;
}

const STATE_VALUE: Record<BreakerState, number> = { closed: 0, 'half-open': 1, open: 2 };

/** The breaker metrics; the state gauge reads each guard's state when scraped. */
export function createGuardMetrics(registry: Registry, guards: () => readonly DependencyGuard[]): GuardMetrics {
  return {
    state: new Gauge({
      name: 'hub_breaker_state',
      help: 'Circuit breaker of an ingress dependency: 0 closed, 1 half-open (one probe), 2 open (pushes refused at once)',
      labelNames: ['dependency'],
      registers: [registry],
      collect() {
        for (const g of guards()) this.set({ dependency: g.dependency }, STATE_VALUE[g.state]);
      },
    }),
    refusals: new Counter({
      name: 'hub_fast_refusals_total',
      help: 'Requests answered 503 without calling the dependency, its circuit breaker being open',
      labelNames: ['dependency'],
      registers: [registry],
    }),
  };
}

/** How long a verdict of the silence check holds, and how long one check may take. */
const SILENCE_VERDICT_MS = 2_000;
const SILENCE_CHECK_MS = 1_000;

// Long because: a breaker, the silence check that lets it open and the guard's methods share the
// breaker and the last verdict; each part is short.
export function createDependencyGuard(
  dependency: Dependency,
  config: BreakerConfig,
  deps: {
    readonly logger: Logger;
    readonly refusals?: Counter<'dependency'>;
    readonly now?: () => number;
    /**
     * Whether the dependency still answers a cheap request (Kafka: a broker describes the cluster).
     * Given, the breaker opens only while it does not (SILENCE_CHECK_MS bound): a cluster that answers
     * while appends time out is moving partition leaders, and pushes wait for that as before.
     */
    readonly answers?: () => Promise<boolean>;
  },
): DependencyGuard {
  const now = deps.now ?? Date.now;
  let silence: { silent: boolean; at: number } | undefined;
  let checking = false;
  const checkSilence = () => {
    const { answers } = deps;
    if (!answers || checking || (silence && now() - silence.at < SILENCE_CHECK_MS)) return;
    checking = true;
    void settleWithin(dependency, 'a health request', SILENCE_CHECK_MS, answers())
      .then(
        (ok) => ok,
        () => false,
      )
      .then((ok) => {
        silence = { silent: !ok, at: now() };
        checking = false;
      });
  };
  const mayOpen = () => !deps.answers || (silence !== undefined && silence.silent && now() - silence.at < SILENCE_VERDICT_MS);
  const breaker: CircuitBreaker = createCircuitBreaker(config, now, (t) => {
    // One line per state change, never per refusal (those are counted): no request data, no token.
    const meta = { dependency, from: t.from, to: t.to, ...(t.to === 'open' ? { failures: t.failures } : {}), ...(t.to === 'closed' ? { refused: t.refused } : {}) };
    if (t.to === 'open') deps.logger.warn('circuit breaker open: pushes are refused at once', meta);
    else if (t.to === 'half-open') deps.logger.info('circuit breaker half-open: one probe goes through', meta);
    else deps.logger.info('circuit breaker closed', meta);
  }, mayOpen);
  deps.refusals?.inc({ dependency }, 0); // the series exists at 0 from the start
  return {
    dependency,
    get state() {
      return config.enabled ? breaker.state : 'closed';
    },
    async run<T>(call: () => Promise<T>): Promise<T> {
      if (!config.enabled) return call();
      const ticket = breaker.admit();
      if (!ticket) {
        deps.refusals?.inc({ dependency });
        throw new DependencyRefused(dependency);
      }
      try {
        const value = await call();
        ticket.succeeded();
        return value;
      } catch (e) {
        const unavailable = unavailability(e);
        if (unavailable) checkSilence();
        ticket.failed(unavailable);
        throw e;
      }
    },
  };
}

/**
 * The event log with its Kafka calls on the push path behind the guard: appends, and the offsets a
 * PATCH or a child PUT reads before it appends (read-your-writes). Everything else passes through
 * (the result delegates to the log), so any EventLog, or the in-memory one of @hub/testing, fits.
 */
export function guardEventLog<L extends Pick<EventLog, 'append' | 'latestOffsets'> & Partial<Pick<EventLog, 'offsetRanges' | 'offsetsAt'>>>(log: L, guard: DependencyGuard): L {
  const guarded = Object.create(log) as L & Partial<Pick<EventLog, 'offsetRanges' | 'offsetsAt'>>;
  guarded.append = (topic, events) => guard.run(() => log.append(topic, events));
  guarded.latestOffsets = (topic) => guard.run(() => log.latestOffsets(topic));
  const { offsetRanges, offsetsAt } = log;
  if (offsetRanges) guarded.offsetRanges = (topic) => guard.run(() => offsetRanges.call(log, topic));
  if (offsetsAt) guarded.offsetsAt = (topic, time) => guard.run(() => offsetsAt.call(log, topic, time));
  return guarded;
}

type AsyncMethods<T> = { [K in keyof T]: T[K] extends (...args: never[]) => Promise<unknown> ? K : never }[keyof T];

/**
 * A port whose named methods each go through the guard, bounded by timeoutMs, one call per request.
 * For the store's group-committed writes (a CDR's receipt): there one pool query carries the CDRs of
 * many requests, so the pool's guard alone would count a whole batch as one failure and a hung
 * Postgres would hold every waiting request behind it. The result delegates everything else to port.
 */
export function guardPort<T extends object>(port: T, methods: ReadonlyArray<AsyncMethods<T>>, guard: DependencyGuard, dependency: Dependency, timeoutMs: number): T {
  const guarded = Object.create(port) as Record<PropertyKey, unknown>;
  for (const name of methods) {
    const method = port[name] as (...args: unknown[]) => Promise<unknown>;
    guarded[name] = (...args: unknown[]) => guard.run(() => settleWithin(dependency, String(name), timeoutMs, method.apply(port, args)));
  }
  return guarded as T;
}
