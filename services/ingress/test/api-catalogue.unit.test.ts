// The route catalogue behind docs/openapi.json must list exactly the routes the ingress serves: this
// walks the express app's router stack (the mounted routers and the routes on the app itself) and
// compares path shapes and methods both ways.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hubErrors } from '@hub/ocpi';
import { API_CATALOGUE } from '../src/api-catalogue.ts';
import { createIngressApp, type IngressDeps } from '../src/app.ts';

interface Layer {
  readonly rawPath?: string;
  readonly route?: { readonly path: string | string[]; readonly methods: Record<string, boolean> };
  readonly handle: { readonly stack?: readonly Layer[] };
}

/** Anything the routers' constructors touch: a callable that returns itself for every property. */
function stub(): unknown {
  const target = (): unknown => proxy;
  const proxy: unknown = new Proxy(target, { get: (_t, p) => (p === 'then' ? undefined : proxy), apply: () => proxy });
  return proxy;
}

function servedRoutes(): Set<string> {
  const deps = new Proxy({ publicBaseUrl: 'https://hub.test', accessLog: 'errors', limits: { maxBodyBytes: 1024, defaultPageLimit: 10, maxPageLimit: 100 } }, {
    get: (t: Record<string, unknown>, p: string) => (p in t ? t[p] : stub()),
  }) as unknown as IngressDeps;
  const app = createIngressApp(deps) as unknown as { router: { stack: readonly Layer[] } };
  const out = new Set<string>();
  const walk = (stack: readonly Layer[], prefix: string): void => {
    for (const layer of stack) {
      if (layer.route) {
        const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
        // A catch-all (router.all) answers every other method of its path with 405: documented per
        // path by the generator (x-other-methods), not an operation of the catalogue.
        const methods = Object.keys(layer.route.methods).filter((m) => m !== '_all');
        for (const p of paths) for (const m of methods) out.add(`${m.toUpperCase()} ${shape(prefix + (p === '/' ? '' : p))}`);
      } else if (layer.handle.stack && layer.rawPath) {
        walk(layer.handle.stack, prefix + layer.rawPath);
      }
    }
  };
  walk(app.router.stack, '');
  return out;
}

/** Parameter names differ (express :cc, OCPI {country_code}): compare the shapes. */
function shape(path: string): string {
  return path.replace(/:[A-Za-z_]+/g, '{}').replace(/\{[a-z_]+\}/g, '{}');
}

describe('API_CATALOGUE (docs/openapi.json)', () => {
  it('lists every route the ingress serves, and no other', () => {
    const served = servedRoutes();
    const declared = new Set(API_CATALOGUE.map((r) => `${r.method.toUpperCase()} ${shape(r.path)}`));
    assert.ok(served.size > 20, `walked ${served.size} routes: the router stack was not found`);
    assert.deepEqual([...served].filter((r) => !declared.has(r)).sort(), [], 'served but not in services/ingress/src/api-catalogue.ts');
    assert.deepEqual([...declared].filter((r) => !served.has(r)).sort(), [], 'in the catalogue but not served');
    assert.equal(declared.size, API_CATALOGUE.length, 'a route is listed twice');
  });

  it('names only registered error kinds and distinct OCPI parameter names', () => {
    for (const route of API_CATALOGUE) {
      for (const kind of route.errors) assert.ok(kind in hubErrors, `${route.method} ${route.path}: ${kind}`);
      const names = [...route.path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]);
      assert.equal(new Set(names).size, names.length, route.path);
    }
  });
});
