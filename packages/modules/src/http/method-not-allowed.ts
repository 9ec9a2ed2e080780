import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import { HubError } from '@hub/ocpi';

// Every known path answers a method it does not serve, OPTIONS and methods express has never heard of
// included, with HTTP 405, an OCPI envelope and an Allow header (RFC 9110 15.5.6).
// The methods served are read from the router's own routes, so a new route needs nothing extra.

const NOT_SERVED = Symbol('not served');

/**
 * A method a module deliberately does not serve (e.g. DELETE of a location), with the reason the
 * caller gets; the 405 itself, with its Allow header, comes from refuseOtherMethods.
 */
export function notServed(detail: string): RequestHandler {
  const handler = (_req: Request, res: Response, next: NextFunction): void => {
    res.locals['methodNotAllowed'] = detail;
    next();
  };
  return Object.assign(handler, { [NOT_SERVED]: true });
}

/** Answers 405 with `Allow: allow` for any method that reaches it. */
export function methodNotAllowed(allow: readonly string[]): RequestHandler {
  const header = allow.join(', ');
  return (_req, res) => {
    const detail: unknown = res.locals['methodNotAllowed'];
    throw new HubError('METHOD_NOT_ALLOWED', { ...(typeof detail === 'string' ? { detail } : {}), headers: { Allow: header } });
  };
}

/** The methods a list of route layers serves (GET implies HEAD, as express answers HEAD with GET). */
export function servedMethods(layers: ReadonlyArray<{ method?: string; handle: unknown }>): string[] {
  const methods = new Set<string>();
  for (const layer of layers) {
    if (!layer.method || layer.method === '_all' || (layer.handle as Record<symbol, unknown>)[NOT_SERVED]) continue;
    methods.add(layer.method.toUpperCase());
  }
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods];
}

/**
 * Adds, after the router's routes, one catch-all per route path that answers 405 with the methods
 * that path serves. Call it once the router's routes are registered.
 */
export function refuseOtherMethods(router: Router): Router {
  const byPath = new Map<string, { path: string; layers: Array<{ method?: string; handle: unknown }> }>();
  for (const layer of router.stack) {
    const route = layer.route;
    if (!route) continue;
    const key = JSON.stringify(route.path);
    const entry = byPath.get(key) ?? { path: route.path, layers: [] };
    entry.layers.push(...route.stack);
    byPath.set(key, entry);
  }
  for (const { path, layers } of byPath.values()) router.all(path, methodNotAllowed(servedMethods(layers)));
  return router;
}
