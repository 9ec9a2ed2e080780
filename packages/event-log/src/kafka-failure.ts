import { DependencyUnavailable, type FailureKind } from '@hub/core';

// Kafka failures: every error of the Kafka client is about the cluster (unreachable, leader moving,
// coordinator loading, request timed out), never about the record a consumer was handling, so each is
// a dependency failure. kafkajs marks its errors by name (KafkaJS...).

export function kafkaFailureKind(err: unknown): FailureKind {
  if (err instanceof DependencyUnavailable) return 'dependency'; // AppendTimeoutError included
  const name = (err as { name?: unknown } | null | undefined)?.name;
  return typeof name === 'string' && name.startsWith('KafkaJS') ? 'dependency' : 'unknown';
}

/** A Kafka failure as DependencyUnavailable (what callers above the event log see); others unchanged. */
export function translateKafkaError(err: unknown): unknown {
  if (err instanceof DependencyUnavailable || kafkaFailureKind(err) !== 'dependency') return err;
  return new DependencyUnavailable('kafka', err instanceof Error ? `Kafka unavailable: ${err.message}` : 'Kafka unavailable', { cause: err });
}

/**
 * A Kafka request that failed, as topic administration and the topic reader report it: a
 * DependencyUnavailable that keeps what the client knew of it. `retriable`: the same request may
 * succeed when asked again (a leader moving, a topic not yet known to every broker); `code`: Kafka's
 * error name where the broker answered with one (e.g. TOPIC_ALREADY_EXISTS).
 */
export class KafkaRequestFailed extends DependencyUnavailable {
  readonly retriable: boolean;
  readonly code: string | undefined;
  constructor(message: string, options: { retriable: boolean; code?: string | undefined; cause?: unknown }) {
    super('kafka', message, { cause: options.cause });
    this.name = 'KafkaRequestFailed';
    this.retriable = options.retriable;
    this.code = options.code;
  }
}

/** A Kafka client error as KafkaRequestFailed; any other error unchanged. */
export function kafkaRequestFailure(err: unknown): unknown {
  if (err instanceof KafkaRequestFailed || kafkaFailureKind(err) !== 'dependency' || err instanceof DependencyUnavailable) return err;
  const e = err as { message?: unknown; retriable?: unknown; type?: unknown };
  return new KafkaRequestFailed(`Kafka: ${String(e.message)}`, { retriable: e.retriable === true, code: typeof e.type === 'string' ? e.type : undefined, cause: err });
}
