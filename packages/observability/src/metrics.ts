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

/**
 * Appends to the event log by logical topic and outcome (ok, error), counted per append (one request
 * or relay batch waiting on Kafka). Both outcomes of a topic exist from its first append, so an
 * error-rate alert has a series (at 0) before the first failure.
 */
export function createAppendMetrics(registry: Registry): (topic: string, outcome: 'ok' | 'error', events: number, seconds: number) => void {
  const appends = new Counter({ name: 'hub_event_appends_total', help: 'Event log appends by topic and outcome (ok: acknowledged by every in-sync replica; error: failed or timed out)', labelNames: ['topic', 'outcome'], registers: [registry] });
  // What a durable push waits for Kafka (its group commit's produce request, acks=all): most of a
  // PATCH's latency. Acknowledged appends only: a failed one waited for its time limit, counted above.
  const duration = new Histogram({
    name: 'hub_event_append_duration_seconds',
    help: 'Seconds from an event log append to its acknowledgement by every in-sync replica, by topic',
    labelNames: ['topic'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return (topic, outcome, _events, seconds) => {
    appends.inc({ topic, outcome: outcome === 'ok' ? 'error' : 'ok' }, 0);
    appends.inc({ topic, outcome });
    if (outcome === 'ok') duration.observe({ topic }, seconds);
  };
}
