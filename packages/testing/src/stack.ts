import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEventLog, ensureTopics, readTopicDefinitions, type KafkaEventLog, type TopicDefinition } from '@hub/event-log';
import { createLogger } from '@hub/observability';
import type pg from 'pg';
import { createPool, dropDatabase, ensureDatabase, migrate, type Database } from '@hub/store';

// An isolated slice of the real test stack for one test file: its own database (migrated) and its own
// topics (a unique prefix) on the broker `npm test` started. Nothing here is a fake.

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export function testEnv(): { brokers: string[]; serverUrl: string } {
  const brokers = process.env['TEST_KAFKA_BROKERS'];
  const serverUrl = process.env['TEST_DATABASE_URL'];
  if (!brokers || !serverUrl) {
    throw new Error('integration tests need the test stack: run them through `npm test` (TEST_KAFKA_BROKERS / TEST_DATABASE_URL unset)');
  }
  return { brokers: brokers.split(','), serverUrl };
}

/**
 * The store's Database as the tests hold it: the store's factories take it, and the tests check rows
 * with their own SQL. Only test code opens the handle; the services cannot (the store exports nothing
 * of pg's).
 */
export type SqlPool = pg.Pool & Database;

/** The handle createPool made, as the pg Pool it is (test code only). */
export function sqlPool(db: Database): SqlPool {
  return db as SqlPool;
}

export interface TestStack {
  readonly name: string;
  readonly databaseUrl: string;
  readonly brokers: string[];
  readonly topicPrefix: string;
  readonly pool: SqlPool;
  readonly eventLog: KafkaEventLog;
  /** Environment for a service process pointed at this slice. */
  env(extra?: Record<string, string>): Record<string, string>;
  cleanup(): Promise<void>;
}

export function topicDefinitions(): TopicDefinition[] {
  return readTopicDefinitions(join(repoRoot, 'infra', 'topics.json'));
}

/** fullReplication: the brokers form a quorum big enough for every topic's defined replication (no clamping). */
export async function createTestStack(label: string, options: { brokers?: string[]; fullReplication?: boolean } = {}): Promise<TestStack> {
  // Brokers of the test's own (the cluster tier starts its own and no shared broker): Postgres only.
  const { brokers, serverUrl } = options.brokers ? { brokers: options.brokers, serverUrl: process.env['TEST_DATABASE_URL'] ?? testEnv().serverUrl } : testEnv();
  const suffix = randomBytes(4).toString('hex');
  const secretKey = randomBytes(32).toString('base64');
  const name = `hubtest_${label.replace(/[^a-z0-9]/gi, '_').toLowerCase()}_${suffix}`;
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  await ensureDatabase(databaseUrl);
  const pool = sqlPool(
    createPool(databaseUrl, {
      max: 4,
      application: `test-${label}`,
      // cleanup() drops the database with FORCE, which terminates whatever is still connected.
      onIdleError: () => undefined,
    }),
  );
  await migrate(pool, join(repoRoot, 'infra', 'migrations'));
  const topicPrefix = `t${suffix}`;
  const eventLog = await createEventLog({ brokers, clientId: `test-${label}`, topicPrefix, logger: createLogger({ service: 'test', level: 'error' }) });
  try {
    const admin = eventLog.topicAdmin();
    await ensureTopics(admin, topicDefinitions(), topicPrefix, undefined, options.fullReplication ? { fullReplicationWithinMs: 60_000 } : {});
    await admin.close();
  } catch (e) {
    await eventLog.close();
    await pool.end();
    throw e;
  }
  return {
    name,
    databaseUrl,
    brokers,
    topicPrefix,
    pool,
    eventLog,
    env: (extra = {}) => ({
      KAFKA_BROKERS: brokers.join(','),
      DATABASE_URL: databaseUrl,
      TOPIC_PREFIX: topicPrefix,
      // One key per stack: every service opens what another sealed under it (partner tokens,
      // drivers' data keys: docs/decisions/0013-erasure-by-destroying-data-keys.md).
      HUB_SECRET_KEY: secretKey,
      LOG_LEVEL: 'info',
      OPERATOR_PORT: '0',
      // The test runner's compile cache (infra/stack/test-tiers.ts) for the services and hubctl runs too.
      ...(process.env['NODE_COMPILE_CACHE'] ? { NODE_COMPILE_CACHE: process.env['NODE_COMPILE_CACHE'] } : {}),
      ...extra,
    }),
    async cleanup() {
      await eventLog.close();
      await pool.end();
      await dropDatabase(databaseUrl).catch(() => undefined);
    },
  };
}
