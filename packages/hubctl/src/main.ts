// hubctl entry point: the only place that reads process.env.
import { hostname, userInfo } from 'node:os';
import { appendInOrder, createEventLog, verifyKafkaAccessAtStart } from '@hub/event-log';
import { createLogger } from '@hub/observability';
import { aesGcmTokenCipher, driverDataKeyring } from '@hub/registry';
import { driverDataEventLog } from '@hub/service-kit';
import { createPool, drainOutbox, eraseDriverToken, postgresDriverDataKeys, postgresDeliveryStore, postgresPositionBindings, postgresQuarantineStore, postgresReadModelStore, postgresRegistryStore, postgresTokenResend } from '@hub/store';
import { runHubctl } from './cli.ts';
import { readHubctlConfig } from './config.ts';

const { databaseUrl, brokers, topicPrefix, kafkaSecurity, secretKey, policy, timeoutMs, hub } = readHubctlConfig(process.env);

const logger = createLogger({ service: 'hubctl', level: 'error', stream: process.stderr });
// Five: a rebuild's three transactions at once, its progress reads and its ANALYZE.
const pool = createPool(databaseUrl, { max: 5, application: 'hubctl', onIdleError: (err) => logger.error('idle Postgres connection lost', { err }) });
const kafkaOptions = { brokers, ...kafkaSecurity, clientId: 'hubctl', topicPrefix, logger };
const eventLog = await createEventLog(kafkaOptions);
// Replays and rebuilds read drivers' personal fields as the services do (opened with their data
// key, the placeholder once erased: docs/decisions/0013-erasure-by-destroying-data-keys.md); without
// HUB_SECRET_KEY they see only the pseudonymous ids the events carry.
const keyring = secretKey.length === 0 ? undefined : driverDataKeyring(secretKey);
const objectLog = keyring ? driverDataEventLog(eventLog, postgresDriverDataKeys(pool, keyring, { ttlMs: 0, maxEntries: 10_000 })) : eventLog;
let code = 1;
try {
  await verifyKafkaAccessAtStart(kafkaOptions);
  code = await runHubctl(process.argv.slice(2), {
    store: postgresRegistryStore(pool),
    source: `hubctl@${hostname()}`,
    actor: userInfo().username,
    readModels: () => ({ store: postgresReadModelStore(pool), eventLog: objectLog, bindings: postgresPositionBindings(pool), sealsDriverData: keyring !== undefined }),
    deliveries: () => ({ deliveries: postgresDeliveryStore(pool), eventLog: objectLog, bindings: postgresPositionBindings(pool) }),
    quarantine: () => postgresQuarantineStore(pool),
    tokens: () => ({ source: postgresTokenResend(pool), deliveries: postgresDeliveryStore(pool) }),
    status: () => ({ pool, eventLog }),
    ...(keyring ? { erase: () => (token: Parameters<typeof eraseDriverToken>[2]) => eraseDriverToken(pool, keyring, token) } : {}),
    partnerCheck: () => ({
      pool,
      openToken: (sealed) => {
        if (secretKey.length === 0) throw new Error('HUB_SECRET_KEY is not set: hubctl needs the key the services use to open the partner token');
        return aesGcmTokenCipher(secretKey).open(sealed);
      },
      options: { policy, timeoutMs, hub },
    }),
    interactive: process.stderr.isTTY === true,
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
    publishAudit: async () => {
      const timeout = new Promise<false>((resolve) => setTimeout(() => resolve(false), 15_000).unref());
      const drained = drainOutbox(pool, (batch) => appendInOrder(eventLog, batch)).then(() => true, () => false);
      return Promise.race([drained, timeout]);
    },
  });
} catch (e) {
  process.stderr.write(`hubctl failed: ${(e as Error).message}\n`);
} finally {
  await Promise.race([Promise.allSettled([eventLog.close(), pool.end()]), new Promise((r) => setTimeout(r, 2000).unref())]);
}
process.exit(code);
