// A dependency of the hub (Kafka or Postgres) is unreachable, restarting or too slow: nothing is wrong
// with the request or record being handled, so the caller retries later (an HTTP client gets 503 with
// Retry-After; a consumer waits and keeps its partition where it is). Adapters translate their
// driver's errors into this one type and classify them as a FailureKind (postgresFailureKind in
// @hub/store, kafkaFailureKind in @hub/event-log), so nothing above them matches on driver error
// names or messages.

export type Dependency = 'kafka' | 'postgres';

export class DependencyUnavailable extends Error {
  readonly dependency: Dependency;
  constructor(dependency: Dependency, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DependencyUnavailable';
    this.dependency = dependency;
  }
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
