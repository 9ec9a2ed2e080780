import { randomUUID } from 'node:crypto';
import { rootCertificates } from 'node:tls';
import { Agent, request } from 'undici';
import { authorizationHeader, OCPI_SUCCESS, OCPI_VERSION, type OcpiVersion } from '@hub/ocpi';
import { PartnerCallError, type DiscoveredEndpoint, type OcpiCallResult, type OcpiPartnerClient, type RequestIds } from '@hub/core';
import { checkOutboundUrl, guardedLookup, type OutboundPolicy } from './outbound-policy.ts';

// Outbound OCPI client on undici: one keep-alive pool per partner origin, a timeout on every call,
// a size cap on answers, and the outbound policy on every URL and every resolved address.

export interface PartnerClientOptions {
  readonly policy: OutboundPolicy;
  readonly timeoutMs: number;
  readonly maxResponseBytes?: number;
  readonly userAgent?: string;
  /** An extra trusted CA (PEM) beside the system roots: a private CA (partner check tests, docs/how-to/partner-check.md). */
  readonly ca?: string;
}

// The port it implements is core's (OcpiPartnerClient, OcpiCallResult); re-exported for its callers.
export type { OcpiCallResult, OcpiPartnerClient };

// Long because: the partner client's OCPI calls over one HTTP agent; it holds `call` (one request,
// below) and a short method per OCPI request.
export function ocpiPartnerClient(options: PartnerClientOptions): OcpiPartnerClient {
  const maxBytes = options.maxResponseBytes ?? 1024 * 1024;
  const agent = new Agent({
    keepAliveTimeout: 30_000,
    connections: 64,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    connect: { timeout: options.timeoutMs, lookup: guardedLookup(options.policy), ...(options.ca ? { ca: [...rootCertificates, options.ca] } : {}) },
  });

  // Long because: one request's whole path: URL policy, send, a size-bounded read of the body and the
  // envelope's parse, each with its own error.
  async function call(
    method: 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE',
    rawUrl: string,
    token: string,
    ids: RequestIds,
    body?: unknown,
    extraHeaders: Record<string, string> = {},
  ): Promise<OcpiCallResult> {
    const url = checkOutboundUrl(options.policy, rawUrl);
    const shown = `${method} ${url.origin}${url.pathname}`;
    let res;
    try {
      res = await request(url, {
        method,
        dispatcher: agent,
        signal: AbortSignal.timeout(options.timeoutMs),
        headers: {
          authorization: authorizationHeader(token),
          // transport_and_format.asciidoc (Unique message IDs): a forwarded request gets a new request id
          // and keeps the correlation id.
          'x-request-id': randomUUID(),
          'x-correlation-id': ids.correlationId,
          'user-agent': options.userAgent ?? 'ocpi-roaming-hub',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...extraHeaders,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (e) {
      const err = e as { name?: string; code?: string; message?: string };
      const timeout = err.name === 'TimeoutError' || err.code === 'UND_ERR_HEADERS_TIMEOUT' || err.code === 'UND_ERR_CONNECT_TIMEOUT';
      const blocked = err.code === 'EHUBBLOCKED' || (err as { cause?: { code?: string } }).cause?.code === 'EHUBBLOCKED';
      throw new PartnerCallError(blocked ? 'URL_NOT_ALLOWED' : timeout ? 'TIMEOUT' : 'NETWORK', rawUrl, `${shown}: ${err.message ?? String(e)}`, { cause: e });
    }
    // The chunks are joined before they are decoded: a multi-byte UTF-8 character (a German or
    // Devanagari display_text) may be split across two chunks, and decoding each alone corrupts it.
    const chunks: Buffer[] = [];
    let size = 0;
    let text: string;
    try {
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > maxBytes) {
          res.body.destroy();
          throw new PartnerCallError('UNEXPECTED_BODY', rawUrl, `${shown}: answer larger than ${maxBytes} bytes`);
        }
        chunks.push(chunk as Buffer);
      }
      text = Buffer.concat(chunks, size).toString('utf8');
    } catch (e) {
      if (e instanceof PartnerCallError) throw e;
      throw new PartnerCallError('NETWORK', rawUrl, `${shown}: ${(e as Error).message}`, { cause: e });
    }
    let envelope: OcpiCallResult['envelope'];
    try {
      envelope = JSON.parse(text) as OcpiCallResult['envelope'];
    } catch {
      throw new PartnerCallError('NOT_JSON', rawUrl, `${shown}: HTTP ${res.statusCode}, answer is not JSON`);
    }
    if (envelope === null || typeof envelope !== 'object') {
      throw new PartnerCallError('UNEXPECTED_BODY', rawUrl, `${shown}: answer is not an OCPI envelope`);
    }
    return { httpStatus: res.statusCode, envelope };
  }

  async function getData(url: string, token: string, ids: RequestIds, version: OcpiVersion): Promise<unknown> {
    const { httpStatus, envelope } = await call('GET', url, token, ids, undefined, { authorization: authorizationHeader(token, version) });
    if (httpStatus < 200 || httpStatus > 299) throw new PartnerCallError('HTTP_STATUS', url, `GET ${url}: HTTP ${httpStatus}`);
    if (envelope.status_code !== OCPI_SUCCESS) {
      throw new PartnerCallError('OCPI_STATUS', url, `GET ${url}: OCPI status_code ${String(envelope.status_code)}`);
    }
    return envelope.data;
  }

  const isString = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

  return {
    call,
    // version_information_endpoint.asciidoc: GET versions returns a list of {version, url}.
    async fetchVersions(url, token, ids, version = OCPI_VERSION) {
      const data = await getData(url, token, ids, version);
      if (!Array.isArray(data) || !data.every((v: { version?: unknown; url?: unknown } | null) => v && isString(v.version) && isString(v.url))) {
        throw new PartnerCallError('UNEXPECTED_BODY', url, `GET ${url}: data is not a list of versions`);
      }
      return data.map((v: { version: string; url: string }) => ({ version: v.version, url: v.url }));
    },
    // version_information_endpoint.asciidoc: version details are {version, endpoints: [{identifier, role, url}]};
    // a 2.1.1 endpoint has no role (version_information_endpoint.md, 2.1.1, Endpoint class): the
    // registry decides what a missing role means for the version it asked for.
    async fetchVersionDetails(url, token, ids, version = OCPI_VERSION) {
      const data = (await getData(url, token, ids, version)) as { version?: unknown; endpoints?: unknown } | null;
      const endpoints = data?.endpoints;
      if (
        !data ||
        !isString(data.version) ||
        !Array.isArray(endpoints) ||
        !endpoints.every((e: { identifier?: unknown; role?: unknown; url?: unknown } | null) => e && isString(e.identifier) && (e.role === undefined || e.role === 'SENDER' || e.role === 'RECEIVER') && isString(e.url))
      ) {
        throw new PartnerCallError('UNEXPECTED_BODY', url, `GET ${url}: data is not version details`);
      }
      return {
        version: data.version,
        endpoints: (endpoints as DiscoveredEndpoint[]).map((e) => (e.role ? { identifier: e.identifier, role: e.role, url: e.url } : { identifier: e.identifier, url: e.url })),
      };
    },
    close: () => agent.close(),
  };
}
