// Kafka and Postgres for the stack's commands (cli.ts): given clusters or ones started here, then the
// topics and the migrations.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { configReader, readKafkaSecurity } from '@hub/config';
import { CHANGE_RETENTION_MS, createEventLog, ensureTopics, readTopicDefinitions, verifyKafkaAccessAtStart, withChangeRetention } from '@hub/event-log';
import { createLogger } from '@hub/observability';
import { createPool, ensureDatabase, migrate } from '@hub/store';
import { startBroker, startLocalKafka, type RunningBroker, type RunningCluster } from './kafka.ts';
import { stopStaleBroker } from './stale-broker.ts';
import { local, migrationsDir, topicsFile } from './paths.ts';
import { provideDatabase, type Database } from './postgres.ts';
import { freePort, say } from './proc.ts';

export interface Stack {
  readonly brokers: string;
  readonly db: Database;
  readonly broker: RunningBroker | RunningCluster | undefined;
  stop(): Promise<void>;
}

/** Where a running stack's Kafka and Postgres come from: given clusters, or started here. */
export interface StackSource {
  readonly brokers: string | undefined;
  readonly databaseUrl: string | undefined;
  readonly startKafka: () => Promise<RunningBroker | RunningCluster>;
}

export const HUB_SOURCE: StackSource = {
  brokers: process.env['KAFKA_BROKERS'],
  databaseUrl: process.env['DATABASE_URL'],
  // The cluster's readiness is asked through the client the services will use (validated with the rest below).
  startKafka: () => startLocalKafka(process.env['KAFKA_NODES']),
};

/** kafka false: Postgres only (the cluster tier's files start their own brokers). */
export async function provideStack(mode: 'start' | 'test', kafka = true, source: StackSource = HUB_SOURCE): Promise<Stack> {
  let broker: RunningBroker | RunningCluster | undefined;
  let brokers = source.brokers;
  const db = await provideDatabase(source.databaseUrl);
  try {
    if (!kafka) {
      brokers = '';
    } else if (!brokers) {
      if (mode === 'start') {
        broker = await source.startKafka();
      } else {
        // The test stack gets its own broker, fresh data and free ports: a running `npm start` is untouched.
        const home = join(local, 'kafka', 'test');
        await stopStaleBroker(home);
        rmSync(home, { recursive: true, force: true });
        broker = await startBroker({ home, port: await freePort(), controllerPort: await freePort(), heapMb: 768 });
      }
      brokers = broker.brokers;
      const pids = 'nodes' in broker ? broker.nodes.map((n) => n.pid).join(', ') : String(broker.pid);
      say(`Kafka ${mode === 'start' ? '' : '(test) '}${'nodes' in broker ? `cluster of ${broker.nodes.length} nodes` : 'broker'} up at ${brokers} (pid ${pids})`);
    } else {
      say(`using Kafka at ${brokers}`);
    }
  } catch (e) {
    await db.stop();
    throw e;
  }
  const resolved = brokers;
  return {
    brokers: resolved,
    db,
    broker,
    async stop() {
      if (broker) {
        say('stopping Kafka');
        await broker.stop();
      }
      await db.stop();
    },
  };
}

export async function prepare(brokers: string, databaseUrl: string, topicPrefix = ''): Promise<void> {
  const logger = createLogger({ service: 'stack', level: 'warn' });
  if ((await ensureDatabase(databaseUrl)) === 'created') say(`created database ${new URL(databaseUrl).pathname.slice(1)}`);
  const pool = createPool(databaseUrl, { max: 1, application: 'ocpi-hub-stack', onIdleError: (err) => logger.warn('idle Postgres connection lost', { err }) });
  try {
    const applied = await migrate(pool, migrationsDir);
    if (applied.length > 0) say(`migrations applied: ${applied.join(', ')}`);
  } finally {
    await pool.end();
  }
  // A secured cluster (KAFKA_SSL_*, KAFKA_SASL_*; the services read the same variables): a refused
  // certificate or login fails the set-up with its one clear message.
  const r = configReader(process.env);
  const kafkaSecurity = readKafkaSecurity(r);
  // The change topics' retention once their snapshot topics exist (docs/decisions/0014-snapshot-topics.md).
  const changeRetentionMs = r.int('HUB_CHANGE_RETENTION_MS', CHANGE_RETENTION_MS, { min: -1 });
  r.done();
  const kafkaOptions = { brokers: brokers.split(','), ...kafkaSecurity, clientId: 'stack', logger, topicPrefix };
  await verifyKafkaAccessAtStart(kafkaOptions);
  const log = await createEventLog(kafkaOptions);
  const admin = log.topicAdmin();
  try {
    const clamped: string[] = [];
    const created = await ensureTopics(admin, withChangeRetention(readTopicDefinitions(topicsFile), changeRetentionMs), topicPrefix, (notice) => {
      // Fewer replicas than defined is what a one-broker development stack is: one line, not a warning per topic.
      if (notice.kind === 'replicas-clamped') clamped.push(notice.topic);
      else say(`warning: ${notice.message}`);
    });
    if (created.length > 0) say(`topics created: ${created.join(', ')}`);
    if (clamped.length > 0) say(`${clamped.length} topics got fewer replicas than infra/topics.json defines (a single-broker stack); KAFKA_NODES=3 npm start or KAFKA_BROKERS=<cluster> gives them their real replication`);
  } finally {
    await log.close();
  }
}
