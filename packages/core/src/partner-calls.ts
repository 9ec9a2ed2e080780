import type { PartnerDirectory, RequestIds } from './registry.ts';

// The port of the hub's calls to partner platforms (@hub/partners implements it over undici) and the
// one failure kind its adapter raises, so routes and dispatchers handle a failed call without knowing
// the HTTP client (docs/decisions/0015-ports-in-one-core.md).

/** Why a call to a partner platform failed; the partners adapter throws it, use cases map it. */
export type PartnerCallFailure =
  | 'URL_NOT_ALLOWED'
  | 'NETWORK'
  | 'TIMEOUT'
  | 'HTTP_STATUS'
  | 'NOT_JSON'
  | 'OCPI_STATUS'
  | 'UNEXPECTED_BODY';

export class PartnerCallError extends Error {
  readonly reason: PartnerCallFailure;
  readonly url: string;
  constructor(reason: PartnerCallFailure, url: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PartnerCallError';
    this.reason = reason;
    this.url = url;
  }
}

export interface OcpiCallResult {
  readonly httpStatus: number;
  readonly envelope: { status_code?: unknown; status_message?: unknown; data?: unknown };
}

export interface OcpiPartnerClient extends PartnerDirectory {
  /** One OCPI call: policy check, Token header (Base64), fresh X-Request-ID, the caller's correlation id. */
  /** A 2.1.1 partner gets its token as it is (authorizationHeader): pass `{ authorization: authorizationHeader(token, '2.1.1') }` in extraHeaders. */
  call(method: 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE', url: string, token: string, ids: RequestIds, body?: unknown, extraHeaders?: Record<string, string>): Promise<OcpiCallResult>;
  close(): Promise<void>;
}
