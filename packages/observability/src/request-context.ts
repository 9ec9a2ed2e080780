import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from './logger.ts';
import type { HttpMetrics } from './metrics.ts';

// OCPI 2.2.1 transport_and_format.asciidoc (Unique message IDs): every request carries X-Request-ID
// and X-Correlation-ID and the response echoes them. The hub generates them when a partner omits them.

export interface RequestContext {
  readonly requestId: string;
  readonly correlationId: string;
  /** A logger carrying both ids; created on first use, most requests never log. */
  readonly log: Logger;
}

class LazyContext implements RequestContext {
  readonly requestId: string;
  readonly correlationId: string;
  /** performance.now() when the request arrived. */
  readonly startedAt: number;
  private readonly root: Logger;
  private child: Logger | undefined;
  constructor(root: Logger, requestId: string, correlationId: string, startedAt: number) {
    this.root = root;
    this.requestId = requestId;
    this.correlationId = correlationId;
    this.startedAt = startedAt;
  }
  get log(): Logger {
    return (this.child ??= this.root.child({ requestId: this.requestId, correlationId: this.correlationId }));
  }
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
  interface Request {
    ctx: RequestContext;
  }
  }
}

const ID = /^[\x21-\x7e]{1,100}$/;

function headerId(req: Request, name: string): string {
  const v = req.headers[name];
  return typeof v === 'string' && ID.test(v) ? v : randomUUID();
}

export interface RequestContextOptions {
  readonly logger: Logger;
  readonly metrics: HttpMetrics;
  /** 'all' logs every request; 'errors' only those answered with HTTP >= 400 or OCPI != 1000. */
  readonly accessLog: 'all' | 'errors';
}

/** Sets ids, a request-scoped logger, echo headers, the access log line and HTTP metrics. */
export function requestContext(options: RequestContextOptions) {
  const { logger, metrics, accessLog } = options;
  // The route pattern (not the path) labels metrics, so label cardinality stays bounded. prom-client
  // hashes (sorts) the label object on every observe; the labelled series are few, so each is resolved
  // once per route, method and status and kept.
  interface RouteSeries {
    readonly label: string;
    readonly byStatus: Map<string, Map<number, { observe(value: number): void }>>;
  }
  const routes = new WeakMap<object, Map<string, RouteSeries>>();
  const unmatched: RouteSeries = { label: 'unmatched', byStatus: new Map() };
  const routeSeries = (req: Request): RouteSeries => {
    const matched = req.route as { path?: unknown } | undefined;
    if (!matched) return unmatched;
    let byBase = routes.get(matched);
    if (!byBase) routes.set(matched, (byBase = new Map<string, RouteSeries>()));
    let series = byBase.get(req.baseUrl);
    if (!series) {
      const label = `${req.baseUrl}${Array.isArray(matched.path) ? matched.path.join('|') : String(matched.path)}`;
      byBase.set(req.baseUrl, (series = { label, byStatus: new Map() }));
    }
    return series;
  };
  const observe = (route: RouteSeries, method: string, status: number, seconds: number) => {
    let byStatus = route.byStatus.get(method);
    if (!byStatus) route.byStatus.set(method, (byStatus = new Map<number, { observe(value: number): void }>()));
    let s = byStatus.get(status);
    if (!s) byStatus.set(status, (s = metrics.duration.labels({ method, route: route.label, status: String(status) })));
    s.observe(seconds);
  };
  // One listener function for every response ('finish' calls it with the response as this): no
  // closure per request.
  function onFinish(this: Response): void {
    const req = this.req;
    const seconds = (performance.now() - (req.ctx as LazyContext).startedAt) / 1e3;
    const route = routeSeries(req);
    observe(route, req.method, this.statusCode, seconds);
    const ocpiStatus = this.locals['ocpiStatus'] as number | undefined;
    if (accessLog === 'all' || this.statusCode >= 400 || (ocpiStatus !== undefined && ocpiStatus !== 1000)) {
      req.ctx.log.info('request', {
        method: req.method,
        path: req.path,
        route: route.label,
        status: this.statusCode,
        ocpiStatus,
        ms: Math.round(seconds * 1e4) / 10,
        party: this.locals['partyKey'] as string | undefined,
      });
    }
  }
  return (req: Request, res: Response, next: NextFunction): void => {
    const requestId = headerId(req, 'x-request-id');
    const correlationId = headerId(req, 'x-correlation-id');
    req.ctx = new LazyContext(logger, requestId, correlationId, performance.now());
    res.setHeader('X-Request-ID', requestId);
    res.setHeader('X-Correlation-ID', correlationId);
    res.on('finish', onFinish);
    next();
  };
}
