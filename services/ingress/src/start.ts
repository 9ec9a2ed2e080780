import { appendInOrder } from '@hub/event-log';
import { checkCdrSettleWindow } from '@hub/modules';
import type { Logger } from '@hub/observability';
import { ocpiPartnerClient } from '@hub/partners';
import { aesGcmTokenCipher, createOutboxRelay } from '@hub/registry';
import { createSchemaValidator } from '@hub/schemas';
import { startServiceShell } from '@hub/service-kit';
import { cachedCallerLookup, createPool, drainOutbox, guardedPool, postgresChargingProfileStore, postgresCommandStore, postgresDeliveryStore, postgresRateLimiter, postgresReadModelStore, postgresRegistryStore, postgresRoutingDirectory } from '@hub/store';
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { BlockList, type AddressInfo } from 'node:net';
import { composeIngressApp } from './compose.ts';
import { answerClientError } from './http.ts';
import { createDependencyGuard, createGuardMetrics, guardEventLog, guardPort, type DependencyGuard } from './dependency-guards.ts';
import { parseAddressBlock, type IngressConfig } from './config.ts';

/** The peers whose X-Forwarded-For is believed (HUB_TRUSTED_PROXIES). */
export function trustedProxyList(blocks: readonly string[]): BlockList {
  const list = new BlockList();
  for (const text of blocks) {
    const b = parseAddressBlock(text);
    if (b) list.addSubnet(b.address, b.prefix, b.family);
  }
  return list;
}

const plainAddress = (a: string): string => (a.startsWith('::ffff:') && a.includes('.') ? a.slice(7) : a);
const isTrusted = (proxies: BlockList, address: string): boolean => {
  const a = plainAddress(address);
  return proxies.check(a, a.includes(':') ? 'ipv6' : 'ipv4');
};

/**
 * The client's address for the logs: the peer's own, unless the peer is a trusted proxy; then the
 * nearest address in X-Forwarded-For that is not a trusted proxy (proxies append the peer they saw,
 * so the entries left of the last untrusted one were written by the client and prove nothing).
 */
export function clientAddress(peer: string | undefined, forwardedFor: string | string[] | undefined, proxies: BlockList): string | undefined {
  if (peer === undefined) return undefined;
  if (forwardedFor === undefined || !isTrusted(proxies, peer)) return plainAddress(peer);
  const chain = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor).split(',').map((s) => s.trim()).filter(Boolean);
  for (let i = chain.length - 1; i >= 0; i--) {
    const hop = chain[i] ?? '';
    if (parseAddressBlock(plainAddress(hop)) === undefined) return plainAddress(peer);
    if (!isTrusted(proxies, hop)) return plainAddress(hop);
  }
  return plainAddress(chain[0] ?? peer);
}

/**
 * A logger whose children (the request loggers of @hub/observability's request context, made on
 * first use while a request is handled) carry the client address of the request being handled.
 */
function withClientAddress(logger: Logger, current: AsyncLocalStorage<string | undefined>): Logger {
  const wrapped = Object.create(logger) as Logger;
  wrapped.child = (meta: object) => {
    const client = current.getStore();
    return logger.child(client === undefined ? meta : { ...meta, client });
  };
  return wrapped;
}

/**
 * HTTPS with the certificate and key files: read at start (a bad pair fails the start), then picked up
 * again when either file changes (a renewed certificate, a Kubernetes Secret update), without a
 * restart; a pair that does not load (one file written, not yet the other) keeps the previous one.
 */
function tlsServer(files: { certFile: string; keyFile: string }, logger: Logger): { server: HttpsServer; stopWatching(): void } {
  const load = () => ({ cert: readFileSync(files.certFile), key: readFileSync(files.keyFile) });
  const server = createHttpsServer({ ...load(), minVersion: 'TLSv1.2' });
  const reload = () => {
    try {
      server.setSecureContext({ ...load(), minVersion: 'TLSv1.2' });
      logger.info('TLS certificate loaded again', { certFile: files.certFile });
    } catch (err) {
      logger.warn('TLS certificate and key did not load; the previous pair is kept', { certFile: files.certFile, err });
    }
  };
  // Polling, not fs.watch: a Kubernetes Secret volume swaps a symlink, which stat() follows.
  for (const f of [files.certFile, files.keyFile]) watchFile(f, { interval: 1_000 }, (now, before) => now.mtimeMs !== before.mtimeMs && reload());
  return { server, stopWatching: () => [files.certFile, files.keyFile].forEach((f) => unwatchFile(f)) };
}

export interface RunningIngress {
  readonly port: number;
  readonly operatorPort: number;
  readonly logger: Logger;
  stop(): Promise<void>;
}

/**
 * Wires adapters to the app and starts listening. main.ts and in-process tests both call this.
 * Long because: the ingress's wiring, in start order: guards, stores, partner clients, the server, the
 * app and its stop; most steps are a few lines.
 */
export async function startIngress(config: IngressConfig, options: { logStream?: NodeJS.WritableStream } = {}): Promise<RunningIngress> {
  // The shell every service starts with (service-kit): logger, metrics, Postgres pool, event log and
  // operator port; /healthz asks Postgres only (while Kafka is away pushes are answered 503 one by one).
  const shell = await startServiceShell('ingress', config, {
    ...options,
    poolMax: 20,
    health: 'postgres',
    appendTimeoutMs: config.appendTimeoutMs,
    lingerMs: config.appendLingerMs,
    secretKey: config.secretKey,
  });
  const { logger, metrics: registry, pool: rawPool, eventLog: kafkaLog } = shell;
  // Circuit breakers around Kafka and Postgres (docs/decisions/0002-fast-refusals.md): while one is
  // open, pushes that need it are answered 503 with Retry-After at once. The health check and the
  // outbox relay below keep the unguarded pool and log: they run in the background and retry on their own.
  const guards: DependencyGuard[] = [];
  const guardMetrics = createGuardMetrics(registry, () => guards);
  // Kafka's opens only while no broker answers: with brokers answering, a failover is under way and
  // pushes wait for it as before (test/cluster/broker-loss.cluster.test.ts).
  const kafkaGuard = createDependencyGuard('kafka', config.breaker, { logger, refusals: guardMetrics.refusals, answers: () => kafkaLog.reachable() });
  const postgresGuard = createDependencyGuard('postgres', config.breaker, { logger, refusals: guardMetrics.refusals });
  guards.push(kafkaGuard, postgresGuard);
  const eventLog = guardEventLog(kafkaLog, kafkaGuard);
  const pool = guardedPool(rawPool, (work) => postgresGuard.run(work), config.postgresTimeoutMs);
  // Readiness, not liveness: an open breaker is reported on /healthz as degraded (still 200), so an
  // orchestrator does not restart an ingress that answers correctly.
  shell.addHealthProblems(() =>
    Promise.resolve(guards.filter((g) => g.state !== 'closed').map((g) => ({ severity: 'degraded' as const, reason: `${g.dependency} circuit breaker ${g.state}: pushes that need it are answered 503 at once` }))),
  );
  const store = postgresRegistryStore(pool);
  const rawCounters = createPool(config.databaseUrl, {
    application: 'ocpi-hub-ingress-counters',
    max: 8,
    asyncCommit: true,
    onIdleError: (err) => logger.warn('idle Postgres connection lost', { err }),
  });
  const counters = guardedPool(rawCounters, (work) => postgresGuard.run(work), config.postgresTimeoutMs);
  const callers = await cachedCallerLookup(store, {
    databaseUrl: config.databaseUrl,
    ttlMs: config.callerCacheTtlMs,
    onError: (e) => logger.warn('credentials listener error; cache bypassed until reconnected', { err: e }),
  });
  // Guarded call by call on the unguarded pool: a CDR's receipt is group-committed (one statement for
  // many requests), so a guard on the pool would count a batch as one failure and hold its requests.
  const deliveries = guardPort(postgresDeliveryStore(rawPool), ['receiveCdr', 'markCdrAppended', 'findCdr', 'sessionExists', 'enqueue'], postgresGuard, 'postgres', config.postgresTimeoutMs);
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
      drainOutbox(rawPool, (batch) => appendInOrder(kafkaLog, batch)),
  });
  // Listen first, so that without HUB_PUBLIC_URL the URLs the hub hands out carry the real port.
  const tls = config.tls ? tlsServer(config.tls, logger) : undefined;
  const server: Server | HttpsServer = tls?.server ?? createServer();
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
    server.listen(config.port, config.host);
  });
  server.keepAliveTimeout = 65_000;
  const port = (server.address() as AddressInfo).port;
  const publicBaseUrl = config.publicBaseUrl ?? `${tls ? 'https' : 'http'}://${config.host}:${port}`;
  const proxies = trustedProxyList(config.trustedProxies);
  const requestClient = new AsyncLocalStorage<string | undefined>();
  const app = composeIngressApp(
    {
      callers,
      store,
      validator: createSchemaValidator(),
      partners,
      realtime,
      cipher: aesGcmTokenCipher(config.secretKey),
      eventLog,
      readModels: postgresReadModelStore(pool),
      rateLimiter: postgresRateLimiter(counters),
      deliveries,
      routing: postgresRoutingDirectory(pool),
      commands: postgresCommandStore(pool),
      chargingProfiles: postgresChargingProfileStore(pool),
    },
    config,
    {
      publicBaseUrl,
      logger: withClientAddress(logger, requestClient),
      metrics: registry,
      onRegistryChange: () => {
        callers.invalidate();
        relay.kick();
      },
    },
  );
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    requestClient.run(clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'], proxies), () => {
      app(req, res);
    });
  });
  void checkCdrSettleWindow(kafkaLog, config.cdrSettleSeconds, config.appendTimeoutMs, (m) => logger.warn(m));
  logger.info('ingress listening', { url: publicBaseUrl, port, tls: tls !== undefined, operatorPort: shell.operator.port });
  return {
    port,
    operatorPort: shell.operator.port,
    logger,
    async stop() {
      tls?.stopWatching();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await relay.stop();
      await Promise.allSettled([callers.close(), partners.close(), realtime.close()]);
      await Promise.allSettled([shell.stop(), rawCounters.end()]);
    },
  };
}
