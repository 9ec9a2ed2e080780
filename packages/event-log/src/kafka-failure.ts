import { DependencyUnavailable } from '@hub/core';

// Kafka failures as the callers of topic administration and the topic reader see them; the client's
// own errors are translated in platformatic-failure.ts.

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
