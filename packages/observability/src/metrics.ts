import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export { Counter, Gauge, Histogram, Registry };

/** A registry per process with the Node.js default metrics, labelled with the service name. */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Request rate is the histogram's _count series (rate(hub_http_request_duration_seconds_count[1m])). */
export interface HttpMetrics {
  readonly duration: Histogram<'method' | 'route' | 'status'>;
}

export function createHttpMetrics(registry: Registry): HttpMetrics {
  return {
    duration: new Histogram({
      name: 'hub_http_request_duration_seconds',
      help: 'Partner API requests by method, route pattern and HTTP status: latency, and through _count the request rate',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
  };
}
