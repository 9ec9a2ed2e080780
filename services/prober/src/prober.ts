import { randomUUID } from 'node:crypto';
import { appendInOrder, createKafkaEventLog, verifyKafkaAccessAtStart } from '@hub/event-log';
import { Counter, Gauge, createAppendMetrics, createLogger, createMetricsRegistry, startOperatorServer, type Logger } from '@hub/observability';
import { ocpiPartnerClient } from '@hub/partners';
import { aesGcmTokenCipher, createOutboxRelay, probePlatform, type ProbeDeps } from '@hub/registry';
import { createPool, drainOutbox, pendingOutbox, postgresCdrReceipts, postgresRegistryStore } from '@hub/store';
import { appendUnappendedCdrs } from './cdr-relay.ts';
import type { ProberConfig } from './config.ts';

// Health prober (interface document, What the service does 9): every interval, GET /ocpi/versions on
// each registered partner with its token; results feed hubclientinfo and hub_partner_up. It also runs
// the safety nets for what should be on Kafka and is not yet: registry audit events (the outbox) and
// received CDRs whose append at the ingress never completed.

export interface RunningProber {
  readonly logger: Logger;
  readonly operatorPort: number;
  /** Runs one probe round now (tests and the first round at start). */
  probeAll(): Promise<void>;
  stop(): Promise<void>;
}

export async function startProber(config: ProberConfig, options: { logStream?: NodeJS.WritableStream } = {}): Promise<RunningProber> {
  const logger = createLogger({ service: 'prober', level: config.logLevel, ...(options.logStream ? { stream: options.logStream } : {}) });
  const registry = createMetricsRegistry('prober');
  const up = new Gauge({
    name: 'hub_partner_up',
    help: '1 when the last probe of the partner platform found OCPI 2.2.1, else 0; parties lists its cc/pid/role',
    labelNames: ['platform', 'parties'],
    registers: [registry],
  });
  const probes = new Counter({ name: 'hub_partner_probes_total', help: 'Health probes by result', labelNames: ['result'], registers: [registry] });
  const outboxGauge = new Gauge({ name: 'hub_registry_outbox_pending', help: 'Registry audit events not yet on Kafka', registers: [registry] });
  const pool = createPool(config.databaseUrl, { application: 'ocpi-hub-prober', max: 4, onIdleError: (err) => logger.warn('idle Postgres connection lost', { err }) });
  const store = postgresRegistryStore(pool);
  const partners = ocpiPartnerClient({ policy: { allowHttp: config.allowHttpPartners, allowedHosts: config.partnerAllowedHosts }, timeoutMs: config.timeoutMs });
  const kafkaOptions = { brokers: config.kafkaBrokers, ...config.kafkaSecurity, clientId: 'prober', topicPrefix: config.topicPrefix, logger };
  await verifyKafkaAccessAtStart(kafkaOptions);
  const eventLog = createKafkaEventLog({ ...kafkaOptions, onAppendSettled: createAppendMetrics(registry) });
  const deps: ProbeDeps = { store, partners, cipher: aesGcmTokenCipher(config.secretKey), source: 'prober' };
  const unappendedGauge = new Gauge({ name: 'hub_cdrs_unappended', help: 'CDRs received and stored but not yet on Kafka', registers: [registry] });
  const deliveries = postgresCdrReceipts(pool);
  const cdrRelay = createOutboxRelay({
    intervalMs: 5_000,
    onError: (e) => logger.warn('unappended CDRs not appended yet', { err: e }),
    drain: async () => {
      const n = await appendUnappendedCdrs({ deliveries, eventLog, logger }, config.cdrRelayAfterSeconds);
      unappendedGauge.set(await deliveries.unappendedCdrCount());
      return n;
    },
  });
  const relay = createOutboxRelay({
    intervalMs: 5_000,
    onError: (e) => logger.warn('registry outbox not published yet', { err: e }),
    drain: async () => {
      const n = await drainOutbox(pool, (batch) => appendInOrder(eventLog, batch));
      outboxGauge.set(await pendingOutbox(pool));
      return n;
    },
  });

  let round: Promise<void> | undefined;
  const probeAll = (): Promise<void> => {
    if (round) return round;
    round = (async () => {
      const platforms = await store.registeredPlatforms();
      const correlationId = randomUUID();
      let next = 0;
      const worker = async () => {
        while (next < platforms.length) {
          const platform = platforms[next++];
          if (!platform) break;
          const result = await probePlatform(deps, platform, correlationId);
          up.set({ platform: platform.platformId, parties: platform.parties.join(',') }, result.ok ? 1 : 0);
          probes.inc({ result: result.ok ? 'connected' : 'offline' });
          if (result.changed) logger.info('partner health changed', { platformId: platform.platformId, ok: result.ok, error: result.error, correlationId });
        }
      };
      await Promise.all(Array.from({ length: Math.min(config.concurrency, platforms.length) }, worker));
      relay.kick();
    })()
      .catch((e: unknown) => {
        logger.error('probe round failed', { err: e });
      })
      .finally(() => {
        round = undefined;
      });
    return round;
  };

  const timer = setInterval(() => void probeAll(), config.intervalMs);
  void probeAll();
  const operator = await startOperatorServer({
    port: config.operatorPort,
    registry,
    health: async () => ({ postgres: await pool.query('select 1').then(() => true, () => false) }),
  });
  logger.info('prober running', { intervalMs: config.intervalMs, operatorPort: operator.port });
  return {
    logger,
    operatorPort: operator.port,
    probeAll,
    async stop() {
      clearInterval(timer);
      await round;
      await relay.stop();
      await cdrRelay.stop();
      await operator.close();
      await Promise.allSettled([eventLog.close(), partners.close()]);
      await pool.end();
    },
  };
}
