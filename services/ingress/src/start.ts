import { appendInOrder, createKafkaEventLog, verifyKafkaAccessAtStart, type EventLog } from '@hub/event-log';
import { Counter, createAppendMetrics, createHttpMetrics, createLogger, createMetricsRegistry, startOperatorServer, type Logger } from '@hub/observability';
import { ocpiPartnerClient } from '@hub/partners';
import { aesGcmTokenCipher, createOutboxRelay } from '@hub/registry';
import { createSchemaValidator } from '@hub/schemas';
import { topics } from '@hub/events';
import { cachedCallerLookup, createPool, drainOutbox, postgresCommandStore, postgresDeliveryStore, postgresRateLimiter, postgresReadModelStore, postgresRegistryStore, postgresRoutingDirectory } from '@hub/store';
import { projectionWait } from './ocpi-objects.ts';
import { dispatcherWait } from './known-sessions.ts';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createIngressApp } from './app.ts';
import { answerClientError } from './http.ts';
import type { IngressConfig } from './config.ts';

export interface RunningIngress {
  readonly port: number;
  readonly operatorPort: number;
  readonly logger: Logger;
  stop(): Promise<void>;
}

/** Wires adapters to the app and starts listening. main.ts and in-process tests both call this. */
export async function startIngress(config: IngressConfig, options: { logStream?: NodeJS.WritableStream } = {}): Promise<RunningIngress> {
  const logger = createLogger({ service: 'ingress', level: config.logLevel, ...(options.logStream ? { stream: options.logStream } : {}) });
  const registry = createMetricsRegistry('ingress');
  const pool = createPool(config.databaseUrl, { application: 'ocpi-hub-ingress', max: 20, onIdleError: (err) => logger.warn('idle Postgres connection lost', { err }) });
  const store = postgresRegistryStore(pool);
  const counters = createPool(config.databaseUrl, {
    application: 'ocpi-hub-ingress-counters',
    max: 8,
    asyncCommit: true,
    onIdleError: (err) => logger.warn('idle Postgres connection lost', { err }),
  });
  const callers = await cachedCallerLookup(store, {
    databaseUrl: config.databaseUrl,
    ttlMs: config.callerCacheTtlMs,
    onError: (e) => logger.warn('credentials listener error; cache bypassed until reconnected', { err: e }),
  });
  const kafkaOptions = {
    brokers: config.kafkaBrokers,
    ...config.kafkaSecurity,
    clientId: 'ingress',
    topicPrefix: config.topicPrefix,
    logger,
    appendTimeoutMs: config.appendTimeoutMs,
    lingerMs: config.appendLingerMs,
  };
  await verifyKafkaAccessAtStart(kafkaOptions);
  const eventLog: EventLog = createKafkaEventLog({ ...kafkaOptions, onAppendSettled: createAppendMetrics(registry) });
  const readModels = postgresReadModelStore(pool);
  const deliveries = postgresDeliveryStore(pool);
  const partners = ocpiPartnerClient({
    policy: { allowHttp: config.allowHttpPartners, allowedHosts: config.partnerAllowedHosts },
    timeoutMs: config.partnerTimeoutMs,
  });
  // Real-time forwards get their own keep-alive pool and a short timeout (interface document,
  // Token authorization: a driver is waiting at the charger).
  const realtime = ocpiPartnerClient({
    policy: { allowHttp: config.allowHttpPartners, allowedHosts: config.partnerAllowedHosts },
    timeoutMs: config.authorizeTimeoutMs,
  });
  const relay = createOutboxRelay({
    intervalMs: 5_000,
    onError: (e) => logger.warn('registry outbox not published yet', { err: e }),
    drain: () =>
      drainOutbox(pool, (batch) => appendInOrder(eventLog, batch)),
  });
  // Listen first, so that without HUB_PUBLIC_URL the URLs the hub hands out carry the real port.
  const server = createServer();
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
    server.listen(config.port, config.host);
  });
  server.keepAliveTimeout = 65_000;
  const port = (server.address() as AddressInfo).port;
  const publicBaseUrl = config.publicBaseUrl ?? `http://${config.host}:${port}`;
  const app = createIngressApp({
    callers,
    store,
    credentials: {
      partners,
      cipher: aesGcmTokenCipher(config.secretKey),
      hub: { ...config.hub, versionsUrl: `${publicBaseUrl}/ocpi/versions` },
      source: 'ingress',
    },
    validator: createSchemaValidator(),
    publicBaseUrl,
    logger,
    httpMetrics: createHttpMetrics(registry),
    accessLog: config.accessLog,
    limits: { maxBodyBytes: config.maxBodyBytes, defaultPageLimit: config.defaultPageLimit, maxPageLimit: config.maxPageLimit },
    objects: {
      eventLog,
      readModels,
      wait: projectionWait(eventLog, readModels, (m) => (m === 'locations' ? topics.locations : topics.tariffs), config.readYourWritesTimeoutMs),
      rateLimiter: postgresRateLimiter(counters),
      limits: { defaultLimit: config.defaultPageLimit, maxLimit: config.maxPageLimit, locationListsPerMinute: config.locationListsPerMinute },
    },
    deliveries,
    routing: postgresRoutingDirectory(pool),
    dispatcherWait: dispatcherWait(eventLog, deliveries, config.dispatcherGroupId, config.readYourWritesTimeoutMs),
    commands: {
      commands: postgresCommandStore(pool),
      policy: { allowHttp: config.allowHttpPartners, allowedHosts: config.partnerAllowedHosts },
      perMinute: config.commandsPerMinute,
      graceSeconds: config.commandGraceSeconds,
      responseUrlHosts: config.responseUrlAllowedHosts,
    },
    tokens: {
      realtime,
      cipher: aesGcmTokenCipher(config.secretKey),
      perMinute: config.authorizationsPerMinute,
      outcomes: new Counter({ name: 'hub_authorizations_total', help: 'Real-time token authorizations by outcome', labelNames: ['outcome'], registers: [registry] }),
    },
    onRegistryChange: () => {
      callers.invalidate();
      relay.kick();
    },
  });
  server.on('request', app);
  const operator = await startOperatorServer({
    port: config.operatorPort,
    registry,
    health: async () => {
      const db = await pool.query('select 1').then(() => true, () => false);
      return { postgres: db };
    },
  });
  logger.info('ingress listening', { url: publicBaseUrl, port, operatorPort: operator.port });
  return {
    port,
    operatorPort: operator.port,
    logger,
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await relay.stop();
      await operator.close();
      await Promise.allSettled([callers.close(), eventLog.close(), partners.close(), realtime.close()]);
      await Promise.allSettled([pool.end(), counters.end()]);
    },
  };
}
