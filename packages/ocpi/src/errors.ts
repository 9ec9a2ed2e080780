// The one registry of errors the hub answers with. Handlers throw HubError(kind); one middleware maps
// the kind to the HTTP status and OCPI status code below. docs/reference/errors.md documents every entry and a
// unit test keeps the two in step.
//
// HTTP statuses follow OCPI 2.2.1 status_codes.asciidoc (Status codes): unparseable JSON is HTTP 400,
// a missing or unknown token HTTP 401 (transport_and_format.asciidoc, Authorization header); once a
// request is valid JSON for an existing resource no HTTP error is returned and the OCPI status_code
// carries the outcome (2xxx client, 3xxx server, 4xxx hub).

export interface ErrorSpec {
  readonly http: number;
  readonly ocpi: number;
  readonly message: string;
}

export const hubErrors = {
  MALFORMED_JSON: { http: 400, ocpi: 2001, message: 'Request body is not valid JSON' },
  BODY_TOO_LARGE: { http: 413, ocpi: 2001, message: 'Request body exceeds the size limit' },
  UNSUPPORTED_CONTENT_ENCODING: { http: 415, ocpi: 2001, message: 'Unsupported Content-Encoding or charset' },
  MALFORMED_URL: { http: 400, ocpi: 2001, message: 'Request path is not validly percent-encoded' },
  MALFORMED_REQUEST: { http: 400, ocpi: 2001, message: 'Malformed HTTP request' },
  AUTH_MISSING: { http: 401, ocpi: 2000, message: 'Authorization header missing or not of the form "Token <token>"' },
  AUTH_UNKNOWN_TOKEN: { http: 401, ocpi: 2000, message: 'Unknown credentials token' },
  AUTH_INITIAL_TOKEN_SCOPE: {
    http: 401,
    ocpi: 2000,
    message: 'The initial token is only valid on the versions and credentials modules',
  },
  PARTY_SUSPENDED: { http: 403, ocpi: 2000, message: 'The party is suspended at this hub' },
  FOREIGN_PARTY: { http: 403, ocpi: 2000, message: 'Not allowed to act as this party' },
  INVALID_PARAMETERS: { http: 200, ocpi: 2001, message: 'Invalid or missing parameters' },
  NOT_ENOUGH_INFORMATION: { http: 200, ocpi: 2002, message: 'Not enough information' },
  UNKNOWN_LOCATION: { http: 404, ocpi: 2003, message: 'Unknown location' },
  UNKNOWN_LOCATION_PUSH: { http: 200, ocpi: 2003, message: 'Unknown location' },
  UNKNOWN_TARIFF: { http: 404, ocpi: 2000, message: 'Unknown tariff' },
  // status_codes.asciidoc: only a request that "addresses an existing resource" MUST NOT get an HTTP
  // error; OCPI has no code for an unknown session, so as for an unknown tariff: 404 with 2000.
  UNKNOWN_SESSION: { http: 404, ocpi: 2000, message: 'Unknown session' },
  UNKNOWN_TOKEN: { http: 404, ocpi: 2000, message: 'Unknown token' },
  // mod_tokens.asciidoc, Real-time authorization: "If the Token is not known, the response SHALL
  // contain the status code: 2004: Unknown Token, and no data field."
  UNKNOWN_TOKEN_AUTHORIZE: { http: 404, ocpi: 2004, message: 'Unknown token' },
  NOT_FOUND: { http: 404, ocpi: 2000, message: 'No such resource' },
  METHOD_NOT_ALLOWED: { http: 405, ocpi: 2000, message: 'Method not allowed' },
  ALREADY_REGISTERED: { http: 405, ocpi: 2000, message: 'Credentials already registered: use PUT to update them' },
  NOT_REGISTERED: { http: 405, ocpi: 2000, message: 'No credentials registered: use POST to register' },
  RATE_LIMITED: { http: 429, ocpi: 2000, message: 'Rate limit exceeded' },
  PARTNER_API_UNUSABLE: { http: 200, ocpi: 3001, message: "Unable to use the client's API" },
  UNSUPPORTED_VERSION: { http: 200, ocpi: 3002, message: 'Unsupported version' },
  // A version the operator did not allow for these credentials is not listed in GET /ocpi/versions
  // (version_information_endpoint): its URLs answer as URLs that do not exist.
  VERSION_NOT_ALLOWED: { http: 404, ocpi: 2000, message: 'This OCPI version is not enabled for these credentials' },
  NO_MATCHING_ENDPOINTS: { http: 200, ocpi: 3003, message: 'No matching endpoints' },
  UNKNOWN_RECEIVER: { http: 200, ocpi: 4001, message: 'Unknown receiver' },
  FORWARD_TIMEOUT: { http: 200, ocpi: 4002, message: 'Timeout on forwarded request' },
  RECEIVER_NOT_CONNECTED: { http: 200, ocpi: 4003, message: 'Receiving party not connected' },
  FORWARD_FAILED: { http: 200, ocpi: 4000, message: 'The receiving party answered unusably' },
  UNAVAILABLE: { http: 503, ocpi: 3000, message: 'Temporarily unavailable, retry later' },
  INTERNAL: { http: 500, ocpi: 3000, message: 'Internal error' },
} as const satisfies Record<string, ErrorSpec>;

export type HubErrorKind = keyof typeof hubErrors;

export interface HubErrorOptions {
  /** Extra detail appended to the registry message, safe to show to the caller. */
  readonly detail?: string;
  /** Goes into the envelope's data: what was wrong (e.g. schema violations). */
  readonly data?: unknown;
  /** Response headers, e.g. Retry-After. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly cause?: unknown;
}

export class HubError extends Error {
  readonly kind: HubErrorKind;
  readonly spec: ErrorSpec;
  readonly data: unknown;
  readonly headers: Readonly<Record<string, string>>;

  constructor(kind: HubErrorKind, options: HubErrorOptions = {}) {
    const spec = hubErrors[kind];
    super(options.detail ? `${spec.message}: ${options.detail}` : spec.message, { cause: options.cause });
    this.name = 'HubError';
    this.kind = kind;
    this.spec = spec;
    this.data = options.data;
    this.headers = options.headers ?? {};
  }
}

export function isHubError(e: unknown): e is HubError {
  return e instanceof HubError;
}

/**
 * The status code a partner of `version` can read: OCPI 2.1.1 has no 2004 and no 4xxx (status_codes.md,
 * 2.1.1), so those become its generic client (2000) and server (3000) errors; the message says which.
 */
export function statusCodeIn(version: string, code: number): number {
  if (version !== '2.1.1') return code;
  if (code >= 4000) return 3000;
  if (code > 2003 && code < 3000) return 2000;
  return code;
}
