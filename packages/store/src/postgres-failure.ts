import { DependencyUnavailable, failureKindOf, RecordRejected, type FailureKind } from '@hub/core';

// Postgres failures by SQLSTATE (PostgreSQL 15 documentation, Appendix A, Error Codes) and by the
// node socket errors the pg driver passes through.

/** SQLSTATE classes and codes that say the server, not the statement's data, is the problem. */
const DEPENDENCY_CLASSES = new Set(['08', '53', '57', '58', 'XX']);
const DEPENDENCY_CODES = new Set([
  '40001', // serialization_failure: retry the transaction
  '40P01', // deadlock_detected
  '55P03', // lock_not_available
  '25006', // read_only_sql_transaction: connected to a standby during a failover
]);
/** Data exceptions and integrity constraint violations: the same values fail the same way again. */
const RECORD_CLASSES = new Set(['22', '23']);
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);
/** Messages the pg driver and pool raise without a code when a connection ends or cannot be had. */
const DRIVER_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection terminated unexpectedly|Query read timeout)/;

export function postgresFailureKind(err: unknown): FailureKind {
  if (err instanceof DependencyUnavailable || err instanceof RecordRejected) return failureKindOf(err);
  const e = err as { code?: unknown; message?: unknown } | null | undefined;
  const code = typeof e?.code === 'string' ? e.code : '';
  if (/^[0-9A-Z]{5}$/.test(code)) {
    if (DEPENDENCY_CODES.has(code) || DEPENDENCY_CLASSES.has(code.slice(0, 2))) return 'dependency';
    if (RECORD_CLASSES.has(code.slice(0, 2))) return 'record';
    return 'unknown';
  }
  if (SOCKET_CODES.has(code)) return 'dependency';
  if (typeof e?.message === 'string' && DRIVER_MESSAGES.test(e.message)) return 'dependency';
  return 'unknown';
}

/** Dependency failures of a server that answered: contention over the same rows, not an outage. */
const CONTENTION_CODES = new Set(['40001', '40P01', '55P03']);

/**
 * A Postgres failure in @hub/core's terms, what callers above the store see: DependencyUnavailable for
 * the server (with `contention` when it answered), RecordRejected for the data (class 22 a `value`,
 * class 23 a `constraint`, the SQLSTATE kept in `code`); anything else unchanged (a bug is no verdict
 * on the data or the server).
 */
export function translatePostgresError(err: unknown): unknown {
  if (err instanceof DependencyUnavailable || err instanceof RecordRejected) return err;
  const kind = postgresFailureKind(err);
  const code = (err as { code?: unknown } | null | undefined)?.code;
  const sqlState = typeof code === 'string' ? code : undefined;
  if (kind === 'dependency') {
    return new DependencyUnavailable('postgres', `Postgres unavailable${sqlState ? ` (${sqlState})` : ''}`, { cause: err, contention: sqlState !== undefined && CONTENTION_CODES.has(sqlState) });
  }
  if (kind === 'record' && sqlState) {
    const message = err instanceof Error ? err.message : String(err);
    return new RecordRejected(sqlState.startsWith('22') ? 'value' : 'constraint', `Postgres refused the data: ${message}`, { cause: err, code: sqlState });
  }
  return err;
}
