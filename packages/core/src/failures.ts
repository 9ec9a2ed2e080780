// A dependency of the hub (Kafka or Postgres) is unreachable, restarting or too slow: nothing is wrong
// with the request or record being handled, so the caller retries later (an HTTP client gets 503 with
// Retry-After; a consumer waits and keeps its partition where it is). Adapters translate their
// driver's errors into this type or RecordRejected (translatePostgresError in @hub/store,
// translatePlatformaticError in @hub/event-log), so nothing above them matches on driver error names, codes
// or messages: failureKindOf classifies what they raised.

export type Dependency = 'kafka' | 'postgres';

export class DependencyUnavailable extends Error {
  readonly dependency: Dependency;
  /**
   * The dependency answered but refused the work for contention (a deadlock, a serialization failure, a
   * lock not available): retry it, but the dependency is up, so no circuit breaker counts it and a
   * batch that met it is retried input by input rather than refused as a whole.
   */
  readonly contention: boolean;
  constructor(dependency: Dependency, message: string, options: { cause?: unknown; contention?: boolean } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DependencyUnavailable';
    this.dependency = dependency;
    this.contention = options.contention ?? false;
  }
}

/**
 * Why a record or request value is refused, whoever refused it:
 * - `value`: a value cannot be stored or compared (a NUL character, a number or date out of range);
 * - `constraint`: it breaks an integrity constraint (a duplicate key, a missing reference);
 * - `undecodable`: it is not what its type promises (not an event of the hub, a payload without a path).
 */
export type RejectionReason = 'value' | 'constraint' | 'undecodable';

/**
 * The data itself is refused: the same values fail the same way every time, so retrying is useless. A
 * consumer quarantines the record and goes on; the ingress answers 2001 for a request `value`. The
 * store raises it for Postgres data exceptions and constraint violations, keeping the SQLSTATE in
 * `code` for messages and for its own use; nothing above the store reads `code` to decide.
 */
export class RecordRejected extends Error {
  readonly reason: RejectionReason;
  /** The driver's code for the refusal (an SQLSTATE), when a driver refused it. */
  readonly code: string | undefined;
  constructor(reason: RejectionReason, message: string, options: { cause?: unknown; code?: string } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RecordRejected';
    this.reason = reason;
    this.code = options.code;
  }
}

/** The FailureKind of an error the adapters raised (DependencyUnavailable, RecordRejected); `unknown` for anything else. */
export function failureKindOf(err: unknown): FailureKind {
  if (err instanceof DependencyUnavailable) return 'dependency';
  if (err instanceof RecordRejected) return 'record';
  return 'unknown';
}

/**
 * How a failure relates to the record or request being processed:
 * - `dependency`: Kafka or Postgres unavailable, a timeout, a serialization conflict; the same work
 *   will succeed later, so retry with backoff and let the partition wait.
 * - `record`: the data itself cannot be stored or applied (a data exception, a constraint); it fails
 *   the same way every time, so a consumer quarantines the record and goes on.
 * - `unknown`: neither is recognisable (a bug, most likely). Consumers treat it as `dependency`
 *   (never skip data on a guess) and report the partition as stuck once it stays on one offset.
 */
export type FailureKind = 'dependency' | 'record' | 'unknown';

/**
 * Fails with DependencyUnavailable when work has not settled within ms; what it yields after that goes
 * to onLate (so a resource it hands over, a pooled connection, is not lost), what it rejects with then
 * is dropped. For a driver with no deadline of its own (pg's pool) and for health probes.
 */
export function settleWithin<T>(dependency: Dependency, what: string, ms: number, work: Promise<T>, onLate: (v: T) => void = () => undefined): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let done = false;
    const timer = setTimeout(() => {
      done = true;
      reject(new DependencyUnavailable(dependency, `${dependency === 'kafka' ? 'Kafka' : 'Postgres'} did not answer ${what} within ${ms} ms`));
    }, ms);
    work.then(
      (v) => {
        clearTimeout(timer);
        if (done) onLate(v);
        else resolve(v);
      },
      // Passed on unchanged (a RecordRejected stays one); the drivers reject with Errors only.
      (e: Error) => {
        clearTimeout(timer);
        if (!done) reject(e);
      },
    );
  });
}
