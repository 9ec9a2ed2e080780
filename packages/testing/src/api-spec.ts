import assert from 'node:assert/strict';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';

// Route tests in the given/when/then shape of emmett's ApiSpecification: a fresh world (in-memory
// ports) and app per test, arranged through the ports (`given`), one request over an ephemeral
// 127.0.0.1 listener (`when`), then expectations on the answer and the world (`then`).

export interface ApiRequest {
  readonly method: string;
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as JSON, or as is when a string. */
  readonly body?: unknown;
}

export interface ApiResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body parsed as JSON (an OCPI envelope, usually); undefined when it is not JSON. */
  readonly body: JsonBody | undefined;
}

export interface JsonBody {
  readonly status_code?: unknown;
  readonly status_message?: unknown;
  readonly timestamp?: unknown;
  readonly data?: unknown;
  readonly [member: string]: unknown;
}

export type Arrange<W> = (world: W) => unknown;
export type Expectation<W> = (response: ApiResponse, world: W) => unknown;

export interface ApiSpec<W> {
  given(...arrange: Array<Arrange<W>>): {
    when(request: ApiRequest | ((world: W) => ApiRequest)): { then(...expectations: Array<Expectation<W>>): Promise<void> };
  };
}

export function apiSpec<W>(setup: () => { world: W; handler: RequestListener }): ApiSpec<W> {
  return {
    given: (...arrange) => ({
      when: (request) => ({
        async then(...expectations) {
          const { world, handler } = setup();
          for (const a of arrange) await a(world);
          const response = await send(handler, typeof request === 'function' ? request(world) : request);
          for (const expect of expectations) await expect(response, world);
        },
      }),
    }),
  };
}

async function send(handler: RequestListener, request: ApiRequest): Promise<ApiResponse> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const body = request.body === undefined ? undefined : typeof request.body === 'string' ? request.body : JSON.stringify(request.body);
    const res = await fetch(`http://127.0.0.1:${port}${request.path}`, { method: request.method, headers: { ...request.headers }, ...(body !== undefined ? { body } : {}) });
    const text = await res.text();
    let parsed: JsonBody | undefined;
    try {
      parsed = JSON.parse(text) as JsonBody;
    } catch {
      // not JSON: only the text
    }
    return { status: res.status, headers: res.headers, text, body: parsed };
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** The answer is an OCPI envelope with this HTTP status and status_code. */
export function expectOcpi<W>(httpStatus: number, statusCode: number, message?: RegExp): Expectation<W> {
  return (res) => {
    assert.equal(res.status, httpStatus, `HTTP status (body ${res.text})`);
    assert.equal(res.body?.status_code, statusCode, `status_code (body ${res.text})`);
    assert.equal(typeof res.body?.timestamp, 'string', 'an OCPI envelope has a timestamp');
    if (message) assert.match(String(res.body?.status_message), message);
  };
}

/** The answer carries this header (exactly, or matching), or not at all when `value` is undefined. */
export function expectHeader<W>(name: string, value: string | RegExp | undefined): Expectation<W> {
  return (res) => {
    const got = res.headers.get(name);
    if (value === undefined) assert.equal(got, null, `no ${name} header`);
    else if (typeof value === 'string') assert.equal(got, value, `${name} header`);
    else assert.match(got ?? '', value, `${name} header`);
  };
}
