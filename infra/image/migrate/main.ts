// The image's `migrate` command (the Kubernetes migration Job, deploy/kubernetes/): applies the
// database migrations and creates the topics, as `npm start` does before the services start
// (infra/stack/cli.ts, prepare). The only place of this command that reads process.env.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configReader, readCommonConfig } from '@hub/config';
import { CHANGE_RETENTION_MS, createEventLog, ensureTopics, readTopicDefinitions, verifyKafkaAccessAtStart, withChangeRetention } from '@hub/event-log';
import { createLogger } from '@hub/observability';
import { createPool, migrate } from '@hub/store';

const infra = join(fileURLToPath(import.meta.url), '..', '..', '..');
const r = configReader(process.env);
const config = readCommonConfig(r, 0);
// The change topics' retention once their snapshot topics exist (docs/decisions/0014-snapshot-topics.md).
const changeRetentionMs = r.int('HUB_CHANGE_RETENTION_MS', CHANGE_RETENTION_MS, { min: -1 });
r.done();
const logger = createLogger({ service: 'migrate', level: config.logLevel });
const pool = createPool(config.databaseUrl, { max: 1, application: 'ocpi-hub-migrate', onIdleError: (err) => logger.warn('idle Postgres connection lost', { err }) });
try {
  // Migrations take an advisory lock (packages/store): two Jobs at once apply each migration once.
  const applied = await migrate(pool, join(infra, 'migrations'));
  logger.info('migrations applied', { applied });
} finally {
  await pool.end();
}
const kafkaOptions = { brokers: config.kafkaBrokers, ...config.kafkaSecurity, clientId: 'migrate', logger, topicPrefix: config.topicPrefix };
await verifyKafkaAccessAtStart(kafkaOptions);
const log = await createEventLog(kafkaOptions);
const admin = log.topicAdmin();
try {
  const created = await ensureTopics(admin, withChangeRetention(readTopicDefinitions(join(infra, 'topics.json')), changeRetentionMs), config.topicPrefix, (notice) => logger.warn(notice.message, { topic: notice.topic }));
  logger.info('topics ready', { created });
} finally {
  await admin.close();
  await log.close();
}
