import { findErrorBy, GenericError } from '@platformatic/kafka';
import { DependencyUnavailable, type FailureKind } from '@hub/core';
import { KafkaRequestFailed } from './kafka-failure.ts';

// Failures of @platformatic/kafka, as the event log's callers see them: an error of
// the client about the cluster (unreachable, a leader moving, a coordinator loading, a request timed
// out, a refused login) is a dependency failure, never one of the record being handled. The client
// marks its errors with a code PLT_KFK_* (its errors.ts); a ResponseError carries the broker's error
// names (ProtocolError apiId, e.g. TOPIC_ALREADY_EXISTS) and whether asking again may succeed
// (canRetry). Its UserError is a call the client refused to make (invalid options): a bug, 'unknown'.

const CALLER_ERRORS = new Set(['PLT_KFK_USER']);

function isClientError(err: unknown): err is GenericError {
  return typeof err === 'object' && err !== null && GenericError.isGenericError(err as GenericError);
}

export function platformaticFailureKind(err: unknown): FailureKind {
  if (err instanceof DependencyUnavailable) return 'dependency';
  if (!isClientError(err)) return 'unknown';
  return CALLER_ERRORS.has(err.code) ? 'unknown' : 'dependency';
}

/** A @platformatic/kafka failure as DependencyUnavailable (what callers above the event log see); others unchanged. */
export function translatePlatformaticError(err: unknown): unknown {
  if (err instanceof DependencyUnavailable || platformaticFailureKind(err) !== 'dependency') return err;
  return new DependencyUnavailable('kafka', `Kafka unavailable: ${(err as Error).message}${brokerErrors(err)}`, { cause: err });
}

/** Whether the same request may succeed when asked again (a leader moving, a topic not yet known everywhere). */
export function platformaticRetriable(err: unknown): boolean {
  // As the client decides for its own retries: every error in the chain retriable.
  return isClientError(err) && findErrorBy(err, 'canRetry', false) === null && findErrorBy(err, 'canRetry', true) !== null;
}

/** The broker's error name of a failed request (e.g. TOPIC_ALREADY_EXISTS), where it answered one. */
export function brokerErrorName(err: unknown): string | undefined {
  if (!isClientError(err)) return undefined;
  const found = findErrorBy<GenericError & { apiId?: unknown }>(err, 'code', 'PLT_KFK_PROTOCOL');
  return typeof found?.apiId === 'string' ? found.apiId : undefined;
}

function brokerErrors(err: unknown): string {
  const name = brokerErrorName(err);
  return name === undefined ? '' : ` (${name})`;
}

/** A @platformatic/kafka error as KafkaRequestFailed (topic administration, the topic reader); any other error unchanged. */
export function platformaticRequestFailure(err: unknown): unknown {
  if (err instanceof DependencyUnavailable || platformaticFailureKind(err) !== 'dependency') return err;
  return new KafkaRequestFailed(`Kafka: ${(err as Error).message}${brokerErrors(err)}`, { retriable: platformaticRetriable(err), code: brokerErrorName(err), cause: err });
}
