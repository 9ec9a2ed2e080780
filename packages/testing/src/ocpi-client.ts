import { request } from 'undici';

// A plain HTTP client for tests, speaking to the hub as a partner would.

export interface OcpiResponse<T = unknown> {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: { status_code: number; status_message?: string; timestamp: string; data?: T };
  readonly text: string;
}

export type TokenEncoding = 'base64' | 'raw';

export function authHeader(token: string, encoding: TokenEncoding = 'base64'): string {
  return `Token ${encoding === 'base64' ? Buffer.from(token).toString('base64') : token}`;
}

export async function call<T = unknown>(
  baseUrl: string,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  options: { token?: string; encoding?: TokenEncoding; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<OcpiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers['authorization'] = authHeader(options.token, options.encoding);
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await request(`${baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await res.body.text();
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
  let parsed: OcpiResponse<T>['body'];
  try {
    parsed = JSON.parse(text) as OcpiResponse<T>['body'];
  } catch {
    throw new Error(`${method} ${path}: HTTP ${res.statusCode}, body is not JSON: ${text.slice(0, 200)}`);
  }
  return { status: res.statusCode, headers: flat, body: parsed, text };
}
