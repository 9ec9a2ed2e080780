import type { Duplex } from 'node:stream';
import type { NextFunction, Request, Response } from 'express';
import { HubError, failure, statusCodeIn } from '@hub/ocpi';
import { send } from '@hub/modules/http';
import { DependencyUnavailable, RecordRejected } from '@hub/core';
import { DependencyRefused } from './dependency-guards.ts';

/** How long a caller waits before retrying after a 503 (Kafka or Postgres restarting, the read model behind). */
export const RETRY_AFTER_SECONDS = 5;

/**
 * What express and body-parser raise for a request they cannot read, by their type and status (never
 * by message): a bad percent-encoding in a path (the router's URIError), an unsupported
 * Content-Encoding or charset, a body that does not inflate or parse, an oversized or incomplete body.
 */
function requestError(err: unknown): HubError | undefined {
  if (err instanceof URIError) return new HubError('MALFORMED_URL', { detail: 'a path segment has a bad percent-encoding' });
  const e = err as { type?: unknown; status?: unknown; message?: unknown } | null | undefined;
  const detail = typeof e?.message === 'string' ? e.message : 'unreadable body';
  switch (e?.type) {
    case 'entity.too.large':
      return new HubError('BODY_TOO_LARGE');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new HubError('UNSUPPORTED_CONTENT_ENCODING', { detail });
    case 'entity.parse.failed':
      return new HubError('MALFORMED_JSON', { detail });
    case 'request.aborted':
    case 'request.size.invalid':
      return new HubError('MALFORMED_JSON', { detail: 'incomplete body' });
  }
  // body-parser marks everything else it could not read (a gzip or deflate body that does not inflate)
  // with a 4xx status.
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) {
    return new HubError('MALFORMED_JSON', { detail: `the body does not decode as its Content-Encoding says (${detail})` });
  }
  return undefined;
}

/**
 * A value the store refused (RecordRejected 'value': a NUL character, a number or date out of range) in a
 * statement the ingress built from request values: the request carried a value that cannot be stored
 * or compared, so the caller is told (2001) instead of getting a 500.
 */
function dataError(err: unknown): HubError | undefined {
  if (err instanceof RecordRejected && err.reason === 'value') {
    return new HubError('INVALID_PARAMETERS', { detail: `a value in the request cannot be stored or compared${err.code ? ` (SQLSTATE ${err.code})` : ''}` });
  }
  return undefined;
}

/**
 * Kafka or Postgres unavailable, restarting or too slow: the caller retries, nothing was accepted.
 * The adapters (event-log, store) throw DependencyUnavailable for it; no driver error is classified here.
 */
function dependencyError(err: unknown): HubError | undefined {
  if (err instanceof DependencyUnavailable) {
    return new HubError('UNAVAILABLE', { cause: err });
  }
  return undefined;
}

/**
 * The one place that turns errors into answers (error registry: @hub/ocpi errors.ts): HubErrors by
 * their kind, unreadable requests by express's and body-parser's error types, dependency failures by
 * DependencyUnavailable from the adapters (503 with Retry-After). Anything else is a bug, logged with its stack
 * and answered 500 without internals.
 */
/** The OCPI version of a partner API URL (/ocpi/2.1.1/...), 2.2.1 for any other. */
export function versionOfPath(url: string | undefined): string {
  return url?.startsWith('/ocpi/2.1.1') ? '2.1.1' : '2.2.1';
}

export function errorMiddleware() {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    let hubError = err instanceof HubError ? err : (requestError(err) ?? dependencyError(err) ?? dataError(err));
    // A refusal by an open breaker is counted (hub_fast_refusals_total) and its opening logged once,
    // not once per request (docs/decisions/0002-fast-refusals.md).
    if (hubError?.kind === 'UNAVAILABLE' && !(err instanceof DependencyRefused)) req.ctx?.log.warn('dependency unavailable', { err, path: req.path, method: req.method });
    if (!hubError) {
      hubError = new HubError('INTERNAL', { cause: err });
      req.ctx?.log.error('request failed', { err, path: req.path, method: req.method });
    }
    if (res.headersSent) return;
    for (const [k, v] of Object.entries(hubError.headers)) res.setHeader(k, v);
    if (hubError.spec.http === 503 && !res.hasHeader('Retry-After')) res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
    // A 2.1.1 partner gets a code of its version, and no data of another version's form.
    const version = versionOfPath(req.originalUrl);
    const code = statusCodeIn(version, hubError.spec.ocpi);
    send(res, hubError.spec.http, failure(code, hubError.message, code === hubError.spec.ocpi ? hubError.data : undefined));
  };
}

/**
 * Node's HTTP parser refuses some requests before express sees them (an unknown method such as FOO, a
 * malformed request line or header, headers too large) and would answer a bare 400. This answers them
 * with an OCPI envelope too (MALFORMED_REQUEST) and closes the connection, whose framing is lost.
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  // Only parser refusals (HPE_*) are answered: a reset or a request timeout has no one to answer.
  if (!socket.writable || !err.code?.startsWith('HPE_')) {
    socket.destroy();
    return;
  }
  const reason: Record<string, string> = {
    HPE_INVALID_METHOD: 'unknown HTTP method',
    HPE_HEADER_OVERFLOW: 'request headers too large',
    HPE_INVALID_URL: 'malformed request target',
  };
  const error = new HubError('MALFORMED_REQUEST', { detail: reason[err.code ?? ''] ?? 'the request is not valid HTTP/1.1' });
  const body = JSON.stringify(failure(error.spec.ocpi, error.message));
  socket.end(
    `HTTP/1.1 ${error.spec.http} Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
