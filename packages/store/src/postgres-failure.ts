import { DependencyUnavailable, type FailureKind } from '@hub/core';

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
  if (err instanceof DependencyUnavailable) return 'dependency';
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

/** A dependency failure as DependencyUnavailable (what callers above the store see); others unchanged. */
export function translatePostgresError(err: unknown): unknown {
  if (err instanceof DependencyUnavailable || postgresFailureKind(err) !== 'dependency') return err;
  const code = (err as { code?: unknown }).code;
  return new DependencyUnavailable('postgres', `Postgres unavailable${typeof code === 'string' ? ` (${code})` : ''}`, { cause: err });
}
