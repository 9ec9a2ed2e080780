import type { CommonConfig } from '@hub/config';
import { createKafkaEventLog, verifyKafkaAccessAtStart, type EventLog } from '@hub/event-log';
import { Gauge, createAppendMetrics, createLogger, createMetricsRegistry, startOperatorServer, type HealthProblem, type Logger, type OperatorServer, type Registry } from '@hub/observability';
import { createPool, type Pool, type RawRecord } from '@hub/store';

export * from './poison-proof.ts';
export * from './consumer-watch.ts';

// What every Kafka worker service (projector, dispatcher) needs before its own logic: a logger, a
// metrics registry, a Postgres pool, the event log and the operator port with a health check that
// asks both Postgres and Kafka.

/**
 * On every (re)assignment, starts each partition where the service's own Postgres state says it
 * stands, not where Kafka's committed offset says: Postgres is the truth, Kafka's offset only a hint.
 * `positionsOf` gives the stored next offsets of a topic, or undefined for a topic it does not own.
 */
export function seekToStoredPositions(
  consumer: ReturnType<EventLog['consumer']>,
  logger: Logger,
  positionsOf: (topic: string) => Promise<Map<number, bigint>> | undefined,
): void {
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    void (async () => {
      for (const [topic, partitions] of Object.entries(e.payload.memberAssignment)) {
        const positions = await positionsOf(topic);
        if (!positions) continue;
        for (const partition of partitions) {
          const position = positions.get(partition);
          if (position !== undefined) consumer.seek({ topic, partition, offset: position.toString() });
        }
      }
    })().catch((err: unknown) => logger.warn('could not seek to the stored positions; resuming from Kafka offsets', { err }));
  });
}

/** Records behind the partition head at the last batch, per consumer group, topic and partition. */
export function consumerLagGauge(metrics: Registry): Gauge<'group' | 'topic' | 'partition'> {
  return new Gauge({ name: 'hub_consumer_lag', help: 'Records behind the partition head at the last batch', labelNames: ['group', 'topic', 'partition'], registers: [metrics] });
}

/** A consumed Kafka record as the quarantine keeps it: byte-exact. */
export function rawRecord(topic: string, partition: number, message: { offset: string; key?: Buffer | null; value: Buffer | null; headers?: Record<string, unknown> }): RawRecord {
  const headers: Record<string, Buffer | string | undefined> = {};
  for (const [k, v] of Object.entries(message.headers ?? {})) {
    const first: unknown = Array.isArray(v) ? v[0] : v;
    headers[k] = Buffer.isBuffer(first) || typeof first === 'string' ? first : undefined;
  }
  return { topic, partition, offset: message.offset, key: message.key ?? null, value: message.value, headers };
}

export interface ServiceShell {
  readonly logger: Logger;
  readonly metrics: Registry;
  readonly pool: Pool;
  readonly eventLog: EventLog;
  readonly operator: OperatorServer;
  /** Adds a source of /healthz problems (a consumer watch). */
  addHealthProblems(source: () => Promise<HealthProblem[]>): void;
  stop(): Promise<void>;
}

export async function startServiceShell(name: string, config: CommonConfig, options: { logStream?: NodeJS.WritableStream } = {}): Promise<ServiceShell> {
  const logger = createLogger({ service: name, level: config.logLevel, ...(options.logStream ? { stream: options.logStream } : {}) });
  const metrics = createMetricsRegistry(name);
  const pool = createPool(config.databaseUrl, { application: `ocpi-hub-${name}`, max: 8, onIdleError: (err) => logger.warn('idle Postgres connection lost', { err }) });
  const kafkaOptions = { brokers: config.kafkaBrokers, ...config.kafkaSecurity, clientId: name, topicPrefix: config.topicPrefix, logger };
  // A secured cluster refusing our certificate trust or credentials stops the start with one clear error.
  await verifyKafkaAccessAtStart(kafkaOptions);
  const eventLog = createKafkaEventLog({ ...kafkaOptions, onAppendSettled: createAppendMetrics(metrics) });
  const admin = eventLog.admin();
  let adminConnected: Promise<void> | undefined;
  const problemSources: Array<() => Promise<HealthProblem[]>> = [];
  const operator = await startOperatorServer({
    port: config.operatorPort,
    registry: metrics,
    health: async () => {
      const postgres = await pool.query('select 1').then(() => true, () => false);
      adminConnected ??= admin.connect().catch((e: unknown) => {
        adminConnected = undefined;
        throw e;
      });
      const kafka = await adminConnected
        .then(() => admin.describeCluster())
        .then((c) => c.brokers.length > 0, () => false);
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
