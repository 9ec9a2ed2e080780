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
