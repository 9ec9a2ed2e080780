// The one error middleware: no 500 for bad input. Unreadable requests are 4xx by
// express's and body-parser's error types, dependency failures 503 with Retry-After once the adapters
// translated them (Postgres SQLSTATE 57P03, 57P01, 08xxx; Kafka client errors), everything with an
// OCPI envelope; and every known path answers other methods with 405 and Allow.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Router, type NextFunction, type Request, type Response } from 'express';
import { AppendTimeoutError, KafkaRequestFailed } from '@hub/event-log';
import { translatePostgresError } from '@hub/store';
import { HubError } from '@hub/ocpi';
import { DependencyUnavailable } from '@hub/core';
import { errorMiddleware, RETRY_AFTER_SECONDS } from '../src/http.ts';
import { notServed, refuseOtherMethods } from '@hub/modules/http';

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: { status_code: number; status_message?: string; timestamp: string };
}

/** Runs the middleware on err and returns what it wrote. */
function answerTo(err: unknown): Answer {
  const headers: Record<string, string> = {};
  let written = '';
  const res = {
    locals: {},
    statusCode: 200,
    headersSent: false,
    setHeader: (k: string, v: string) => void (headers[k.toLowerCase()] = String(v)),
    hasHeader: (k: string) => k.toLowerCase() in headers,
    end: (text: string) => void (written = text),
  } as unknown as Response;
  const req = { path: '/x', method: 'PUT', ctx: { log: { error: () => undefined, warn: () => undefined } } } as unknown as Request;
  errorMiddleware()(err, req, res, (() => undefined) as NextFunction);
  return { status: res.statusCode, headers, body: JSON.parse(written) as Answer['body'] };
}

function pgError(code: string): Error {
  return Object.assign(new Error(`pg says ${code}`), { code });
}

describe('errorMiddleware: bad input is never a 500', () => {
  it("a path segment with a bad percent-encoding (the router's URIError, status 400) is 400 / 2001", () => {
    for (const bad of ['%', '%zz', '%E0%A4%A']) {
      let thrown: unknown;
      try {
        decodeURIComponent(bad);
      } catch (e) {
        thrown = Object.assign(e as Error, { message: `Failed to decode param '${bad}'`, status: 400 });
      }
      const a = answerTo(thrown);
      assert.equal(a.status, 400, bad);
      assert.equal(a.body.status_code, 2001);
      assert.match(a.body.status_message ?? '', /percent-encoding/);
    }
  });

  it('an unsupported Content-Encoding is 415 / 2001', () => {
    const a = answerTo(Object.assign(new Error('unsupported content encoding "compress"'), { status: 415, type: 'encoding.unsupported' }));
    assert.equal(a.status, 415);
    assert.equal(a.body.status_code, 2001);
  });

  it('a body that does not inflate (zlib error wrapped by body-parser with status 400) is 400 / 2001', () => {
    const a = answerTo(Object.assign(new Error('incorrect header check'), { status: 400, statusCode: 400, expose: true, code: 'Z_DATA_ERROR', errno: -3 }));
    assert.equal(a.status, 400);
    assert.equal(a.body.status_code, 2001);
  });

  it('unparseable JSON stays 400 / 2001 and an oversized body 413', () => {
    assert.equal(answerTo(Object.assign(new SyntaxError('Unexpected token'), { status: 400, type: 'entity.parse.failed' })).status, 400);
    assert.equal(answerTo(Object.assign(new Error('too large'), { status: 413, type: 'entity.too.large' })).status, 413);
  });
});

describe('errorMiddleware: dependencies unavailable are 503 with Retry-After', () => {
  // Driver errors reach the middleware as the adapters translate them (store pool.ts, event log).
  const cases: Array<[string, unknown]> = [
    ['Postgres starting up (57P03)', translatePostgresError(pgError('57P03'))],
    ['Postgres admin shutdown (57P01)', translatePostgresError(pgError('57P01'))],
    ['Postgres connection failure (08006)', translatePostgresError(pgError('08006'))],
    ['Postgres cannot connect now (08001)', translatePostgresError(pgError('08001'))],
    ['Postgres refusing connections (ECONNREFUSED)', translatePostgresError(pgError('ECONNREFUSED'))],
    ['a Kafka request that failed', new KafkaRequestFailed('Kafka: Connection to 127.0.0.1:9092 failed.', { retriable: true })],
    ['an append timeout', new AppendTimeoutError('ocpi.sessions.v1', 2000)],
    ['DependencyUnavailable', new DependencyUnavailable('postgres', 'Postgres unavailable')],
  ];
  for (const [what, err] of cases) {
    it(what, () => {
      const a = answerTo(err);
      assert.equal(a.status, 503);
      assert.equal(a.body.status_code, 3000);
      assert.equal(a.headers['retry-after'], String(RETRY_AFTER_SECONDS));
    });
  }

  it('a HubError UNAVAILABLE without its own Retry-After gets one too', () => {
    assert.equal(answerTo(new HubError('UNAVAILABLE', { detail: 'the read model is behind' })).headers['retry-after'], String(RETRY_AFTER_SECONDS));
  });

  // What reaches the middleware is what the store raises: its translation of the driver's error.
  it('a Postgres data exception from request values (22021: a NUL character) is 2001, not a 500', () => {
    const a = answerTo(translatePostgresError(pgError('22021')));
    assert.equal(a.status, 200);
    assert.equal(a.body.status_code, 2001);
  });

  it('a constraint violation (23505) or a bug is not called an outage: 500, without internals', () => {
    for (const err of [translatePostgresError(pgError('23505')), new TypeError("Cannot read properties of undefined (reading 'x')")]) {
      const a = answerTo(err);
      assert.equal(a.status, 500);
      assert.equal(a.body.status_message, 'Internal error');
    }
  });
});

describe('refuseOtherMethods', () => {
  function dispatch(router: Router, method: string, url: string): Promise<unknown> {
    const req = { method, url, headers: {} } as unknown as Request;
    const res = { locals: {}, setHeader: () => undefined } as unknown as Response;
    return new Promise((resolve) => void router(req, res, (err?: unknown) => resolve(err ?? 'fell through')));
  }
  const router = Router();
  router.get('/', (_req, _res, next) => next('listed'));
  router.get('/:id', (_req, _res, next) => next('read'));
  router.put('/:id', (_req, _res, next) => next('pushed'));
  router.patch('/:id', notServed('push the whole object with PUT'));
  refuseOtherMethods(router);

  for (const method of ['OPTIONS', 'DELETE', 'POST', 'PROPFIND', 'PATCH']) {
    it(`answers ${method} on a known path with 405 and the methods the path serves`, async () => {
      const err = await dispatch(router, method, '/LOC1');
      assert.ok(err instanceof HubError);
      assert.equal(err.kind, 'METHOD_NOT_ALLOWED');
      assert.equal(err.headers['Allow'], 'GET, PUT, HEAD');
      if (method === 'PATCH') assert.match(err.message, /push the whole object with PUT/);
    });
  }

  it('serves the methods it has and leaves unknown paths alone', async () => {
    assert.equal(await dispatch(router, 'PUT', '/LOC1'), 'pushed');
    assert.equal(await dispatch(router, 'HEAD', '/LOC1'), 'read');
    assert.equal(((await dispatch(router, 'POST', '/')) as HubError).headers['Allow'], 'GET, HEAD');
    assert.equal(await dispatch(router, 'GET', '/a/b/c'), 'fell through');
  });
});
