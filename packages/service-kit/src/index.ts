import type { CommonConfig } from '@hub/config';
import { createEventLog, verifyKafkaAccessAtStart } from '@hub/event-log';
import type { EventLog } from '@hub/core';
import { Gauge, createAppendMetrics, createLogger, createMetricsRegistry, startOperatorServer, type HealthProblem, type Logger, type OperatorServer, type Registry } from '@hub/observability';
import { driverDataKeyring } from '@hub/registry';
import { createPool, databaseReachable, postgresDriverDataKeys, type Database } from '@hub/store';
import { driverDataEventLog } from './driver-data-log.ts';

export * from './poison-proof.ts';
export * from './consumer-watch.ts';
export * from './projection-wait.ts';
export * from './driver-data-log.ts';
export * from './snapshot.ts';

// What every Kafka worker service (projector, dispatcher) needs before its own logic: a logger, a
// metrics registry, a Postgres pool, the event log and the operator port with a health check that
// asks both Postgres and Kafka.

/** Records behind the partition head at the last batch, per consumer group, topic and partition. */
export function consumerLagGauge(metrics: Registry): Gauge<'group' | 'topic' | 'partition'> {
  return new Gauge({ name: 'hub_consumer_lag', help: 'Records behind the partition head at the last batch', labelNames: ['group', 'topic', 'partition'], registers: [metrics] });
}

export interface ServiceShell {
  readonly logger: Logger;
  readonly metrics: Registry;
  readonly pool: Database;
  readonly eventLog: EventLog;
  readonly operator: OperatorServer;
  /** Adds a source of /healthz problems (a consumer watch). */
  addHealthProblems(source: () => Promise<HealthProblem[]>): void;
  stop(): Promise<void>;
}

export interface ServiceShellOptions {
  readonly logStream?: NodeJS.WritableStream;
  /** Postgres connections of the shell's pool (default 8). */
  readonly poolMax?: number;
  /**
   * What /healthz asks: Postgres and Kafka (the consumers, default), or Postgres only (the ingress
   * and the prober: while Kafka is away they keep serving and answer pushes 503 one by one).
   */
  readonly health?: 'postgres-and-kafka' | 'postgres';
  /** The event log's append bound and linger (ingress configuration). */
  readonly appendTimeoutMs?: number;
  readonly lingerMs?: number;
  /**
   * HUB_SECRET_KEY: drivers' personal data is sealed and opened with the data keys it wraps
   * (driver-data-log.ts). Every service that appends or reads tokens, sessions or CDRs gives it.
   */
  readonly secretKey?: Buffer;
}

export async function startServiceShell(name: string, config: CommonConfig, options: ServiceShellOptions = {}): Promise<ServiceShell> {
  const logger = createLogger({ service: name, level: config.logLevel, ...(options.logStream ? { stream: options.logStream } : {}) });
  const metrics = createMetricsRegistry(name);
  const pool = createPool(config.databaseUrl, { application: `ocpi-hub-${name}`, max: options.poolMax ?? 8, onIdleError: (err) => logger.warn('idle Postgres connection lost', { err }) });
  const kafkaOptions = {
    brokers: config.kafkaBrokers,
    ...config.kafkaSecurity,
    clientId: name,
    topicPrefix: config.topicPrefix,
    logger,
    ...(options.appendTimeoutMs !== undefined ? { appendTimeoutMs: options.appendTimeoutMs } : {}),
    ...(options.lingerMs !== undefined ? { lingerMs: options.lingerMs } : {}),
  };
  // A secured cluster refusing our certificate trust or credentials stops the start with one clear error.
  await verifyKafkaAccessAtStart(kafkaOptions);
  const kafkaLog: EventLog = await createEventLog({ ...kafkaOptions, onAppendSettled: createAppendMetrics(metrics) });
  const eventLog = options.secretKey ? driverDataEventLog(kafkaLog, postgresDriverDataKeys(pool, driverDataKeyring(options.secretKey))) : kafkaLog;
  const problemSources: Array<() => Promise<HealthProblem[]>> = [];
  const operator = await startOperatorServer({
    port: config.operatorPort,
    registry: metrics,
    health: async (): Promise<Record<string, boolean>> => {
      const postgres = await databaseReachable(pool);
      if (options.health === 'postgres') return { postgres };
      const kafka = await eventLog.reachable();
      return { postgres, kafka };
    },
    problems: async () => (await Promise.all(problemSources.map((source) => source()))).flat(),
  });
  return {
    logger,
    metrics,
    pool,
    eventLog,
    operator,
    addHealthProblems(source) {
      problemSources.push(source);
    },
    async stop() {
      await operator.close();
      await eventLog.close();
      await pool.end();
    },
  };
}
