import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface OperatorServer {
  readonly port: number;
  close(): Promise<void>;
}

export type HealthCheck = () => Promise<Record<string, boolean>>;

/**
 * The operator port of every service: GET /metrics (Prometheus text format) and GET /healthz (200 when
 * every dependency check passes, 503 otherwise, with the checks as JSON). Kept off the partner port.
 */
export async function startOperatorServer(options: {
  readonly port: number;
  readonly host?: string;
  readonly registry: Registry;
  readonly health: HealthCheck;
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
      void options
        .health()
        .catch(() => ({ checks: false }))
        .then((checks) => {
          const ok = Object.values(checks).every(Boolean);
          res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ ok, checks }));
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
