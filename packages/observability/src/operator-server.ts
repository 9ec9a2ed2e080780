import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface OperatorServer {
  readonly port: number;
  close(): Promise<void>;
}

export type HealthCheck = () => Promise<Record<string, boolean>>;

/**
 * Something an operator must look at although every dependency answers: `degraded` (the service
 * works, e.g. records were quarantined: /healthz stays 200 and says so) or `down` (it does not make
 * progress, e.g. a partition stuck on one offset beyond the bound: /healthz answers 503).
 */
export interface HealthProblem {
  readonly severity: 'degraded' | 'down';
  readonly reason: string;
}

/**
 * The operator port of every service: GET /metrics (Prometheus text format) and GET /healthz (200 when
 * every dependency check passes and no problem is `down`, 503 otherwise; the body has the checks, the
 * status ok/degraded/down and the problems with their reasons). Kept off the partner port.
 */
export async function startOperatorServer(options: {
  readonly port: number;
  readonly host?: string;
  readonly registry: Registry;
  readonly health: HealthCheck;
  readonly problems?: () => Promise<HealthProblem[]>;
}): Promise<OperatorServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/metrics') {
      options.registry
        .metrics()
        .then((text) => {
          res.writeHead(200, { 'content-type': options.registry.contentType });
          res.end(text);
        })
        .catch(() => {
          res.writeHead(500).end();
        });
      return;
    }
    if (req.method === 'GET' && path === '/healthz') {
      void Promise.all([
        options.health().catch(() => ({ checks: false })),
        (options.problems?.() ?? Promise.resolve([])).catch((): HealthProblem[] => [{ severity: 'degraded', reason: 'health problems could not be read' }]),
      ]).then(([checks, problems]) => {
        const ok = Object.values(checks).every(Boolean) && !problems.some((p) => p.severity === 'down');
        const status = !ok ? 'down' : problems.length > 0 ? 'degraded' : 'ok';
        res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok, status, checks, problems }));
      });
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
