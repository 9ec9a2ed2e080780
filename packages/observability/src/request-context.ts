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
  private readonly root: Logger;
  private child: Logger | undefined;
  constructor(root: Logger, requestId: string, correlationId: string) {
    this.root = root;
    this.requestId = requestId;
    this.correlationId = correlationId;
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

// The route pattern (not the path) labels metrics, so label cardinality stays bounded.
const routeLabels = new WeakMap<object, Map<string, string>>();
function routeLabel(req: Request): string {
  const matched = req.route as { path?: unknown } | undefined;
  if (!matched) return 'unmatched';
  let byBase = routeLabels.get(matched);
  if (!byBase) routeLabels.set(matched, (byBase = new Map<string, string>()));
  let label = byBase.get(req.baseUrl);
  if (label === undefined) byBase.set(req.baseUrl, (label = `${req.baseUrl}${Array.isArray(matched.path) ? matched.path.join('|') : String(matched.path)}`));
  return label;
}

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
  // prom-client hashes (sorts) the label object on every observe; the labelled series are few, so
  // each is resolved once and kept.
  const series = new Map<string, { observe(value: number): void }>();
  const observe = (method: string, route: string, status: number, seconds: number) => {
    const key = `${method} ${status} ${route}`;
    let s = series.get(key);
    if (!s) {
      s = metrics.duration.labels({ method, route, status: String(status) });
      series.set(key, s);
    }
    s.observe(seconds);
  };
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    const requestId = headerId(req, 'x-request-id');
    const correlationId = headerId(req, 'x-correlation-id');
    req.ctx = new LazyContext(logger, requestId, correlationId);
    res.setHeader('X-Request-ID', requestId);
    res.setHeader('X-Correlation-ID', correlationId);
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = routeLabel(req);
      observe(req.method, route, res.statusCode, seconds);
      const ocpiStatus = res.locals['ocpiStatus'] as number | undefined;
      if (accessLog === 'all' || res.statusCode >= 400 || (ocpiStatus !== undefined && ocpiStatus !== 1000)) {
        req.ctx.log.info('request', {
          method: req.method,
          path: req.path,
          route,
          status: res.statusCode,
          ocpiStatus,
          ms: Math.round(seconds * 1e4) / 10,
          party: res.locals['partyKey'] as string | undefined,
        });
      }
    });
    next();
  };
}
