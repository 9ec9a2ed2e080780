// A module's routes are declared once (module.ts) and its handlers given by method and path
// (routes.ts): mountsOf builds the routers from the declarations (http/mounts.ts, decision 0016). An
// in-process express app on 127.0.0.1 stands in for the ingress's; no Kafka or Postgres.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import express, { type RequestHandler } from 'express';
import { HubError } from '@hub/ocpi';
import type { OcpiModule, RouteSpec } from '../src/index.ts';
import { mountsOf, ok, okEmpty } from '../src/http/index.ts';

const V = '/ocpi/2.2.1';
const route = (method: RouteSpec['method'], path: string, extra: Partial<RouteSpec> = {}): RouteSpec => ({ method, path: `${V}/${path}`, module: 'widgets', summary: path, auth: 'hub-token', errors: [], ...extra });

/** A module of the table's shape with only what mounting reads: its endpoints and routes. */
function widgets(routes: RouteSpec[], onlyIn: RouteSpec[] = []): OcpiModule {
  return { id: 'widgets', http: { endpoints: { '2.2.1': [{ roles: ['RECEIVER'], path: 'widgets' }], '2.1.1': [{ roles: ['RECEIVER'], path: 'widgets' }] }, routes, onlyIn } } as unknown as OcpiModule;
}

const WIDGET = 'widgets/{country_code}/{party_id}/{widget_id}';
const declared = widgets(
  [
    route('get', 'widgets'),
    route('put', WIDGET, { body: { schemas: ['ocpi/widget.json'] } }),
    route('get', WIDGET),
    route('post', 'widgets/callback/{request_id}', { auth: 'none', body: { schemas: ['ocpi/result.json'] } }),
    route('delete', WIDGET, { notIn: ['2.1.1'] }),
  ],
  [{ ...route('get', 'widgets/{widget_id}'), path: '/ocpi/2.1.1/widgets/{widget_id}' }],
);
const echo: RequestHandler = (req, res) => ok(res, req.params);
const handlers: Record<string, RequestHandler> = {
  'GET widgets': (_req, res) => ok(res, []),
  [`PUT ${WIDGET}`]: (_req, res) => okEmpty(res),
  [`GET ${WIDGET}`]: echo,
  'POST widgets/callback/{request_id}': echo,
  [`DELETE ${WIDGET}`]: (_req, res) => okEmpty(res),
  'GET widgets/{widget_id}': echo,
};

describe('mountsOf: routers built from the declared routes', () => {
  it('mounts each path prefix once, longest first, a callback unauthenticated, JSON only where a body is declared', () => {
    const mounts = mountsOf(declared, '2.2.1', handlers);
    assert.deepEqual(
      mounts.map((m) => ({ path: m.path, authenticated: m.authenticated, json: m.json })),
      [
        { path: 'widgets/callback', authenticated: false, json: true },
        { path: 'widgets', authenticated: true, json: true },
      ],
    );
    assert.deepEqual(mountsOf(widgets([route('get', 'widgets')]), '2.2.1', { 'GET widgets': echo }).map((m) => m.json), [false]);
  });

  it('refuses a declared route without a handler, and a handler for no declared route', () => {
    const { [`GET ${WIDGET}`]: _missing, ...withoutDetail } = handlers;
    assert.throws(() => mountsOf(declared, '2.2.1', withoutDetail), /widgets 2\.2\.1: no handler for GET widgets\/\{country_code\}\/\{party_id\}\/\{widget_id\}/);
    assert.throws(() => mountsOf(declared, '2.2.1', { ...handlers, 'PATCH widgets': echo }), /handlers for routes it does not declare: PATCH widgets/);
  });

  it('refuses a mount that mixes authenticated routes and callbacks', () => {
    const mixed = widgets([route('get', 'widgets'), route('post', 'widgets', { auth: 'none' })]);
    assert.throws(() => mountsOf(mixed, '2.2.1', { 'GET widgets': echo, 'POST widgets': echo }), /mixes authenticated routes and callbacks/);
  });

  describe('served', () => {
    let base = '';
    let close: () => void = () => undefined;
    before(async () => {
      const app = express();
      for (const version of ['2.2.1', '2.1.1'] as const) {
        for (const mount of mountsOf(declared, version, handlers)) app.use(`/ocpi/${version}/${mount.path}`, ...mount.handlers);
      }
      app.use(() => {
        throw new HubError('NOT_FOUND');
      });
      app.use(((err: HubError, _req, res, _next) => {
        for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
        res.status(err.spec.http).json({ status_code: err.spec.ocpi, status_message: err.message });
      }) as express.ErrorRequestHandler);
      const server = app.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      close = () => server.close();
    });
    after(() => close());

    it('gives path parameters to the handler by their OCPI names', async () => {
      const answer = await fetch(`${base}${V}/widgets/NL/ABC/W1`);
      assert.deepEqual(((await answer.json()) as { data: unknown }).data, { country_code: 'NL', party_id: 'ABC', widget_id: 'W1' });
      const callback = await fetch(`${base}${V}/widgets/callback/R1`, { method: 'POST' });
      assert.deepEqual(((await callback.json()) as { data: unknown }).data, { request_id: 'R1' });
    });

    it('answers another method of a declared path with 405 and the methods it serves', async () => {
      const answer = await fetch(`${base}${V}/widgets/NL/ABC/W1`, { method: 'PATCH' });
      assert.equal(answer.status, 405);
      assert.equal(answer.headers.get('allow'), 'PUT, GET, DELETE, HEAD');
    });

    it('names an empty path segment by the declared parameter (2001)', async () => {
      const answer = (await (await fetch(`${base}${V}/widgets/NL//W1`)).json()) as { status_code: number; status_message: string };
      assert.equal(answer.status_code, 2001);
      assert.match(answer.status_message, /party_id in the path must not be empty/);
    });

    it('serves a version the routes of its form: the ones it leaves out are not mounted, its own are', async () => {
      assert.equal((await fetch(`${base}/ocpi/2.1.1/widgets/NL/ABC/W1`, { method: 'DELETE' })).status, 405);
      assert.equal((await fetch(`${base}${V}/widgets/NL/ABC/W1`, { method: 'DELETE' })).status, 200);
      const own = await fetch(`${base}/ocpi/2.1.1/widgets/W1`);
      assert.deepEqual(((await own.json()) as { data: unknown }).data, { widget_id: 'W1' });
      assert.equal((await fetch(`${base}${V}/widgets/W1`)).status, 404);
    });
  });
});
