// The sandbox counterparts' entry point (started by `npm run sandbox` beside the hub's services): the
// only place that reads process.env. Every variable: docs/reference/configuration.md, Sandbox.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { configReader, DEFAULT_DATABASE_URL, DEFAULT_KAFKA_BROKERS, readKafkaSecurity } from '@hub/config';
import { appendInOrder, createEventLog } from '@hub/event-log';
import { createLogger } from '@hub/observability';
import { createPool, drainOutbox, postgresRegistryStore } from '@hub/store';
import { startSandbox, type SandboxState } from './sandbox.ts';

const r = configReader(process.env);
const databaseUrl = r.url('DATABASE_URL', DEFAULT_DATABASE_URL);
const brokers = r.list('KAFKA_BROKERS', DEFAULT_KAFKA_BROKERS);
const topicPrefix = r.optionalString('TOPIC_PREFIX') ?? '';
const kafkaSecurity = readKafkaSecurity(r);
const hubUrl = r.url('SANDBOX_HUB_URL', 'http://127.0.0.1:8090').replace(/\/+$/, '');
const host = r.string('SANDBOX_HOST', '127.0.0.1');
const port = r.int('SANDBOX_PORT', 8091, { min: 0, max: 65535 });
const publicBaseUrl = r.optionalString('SANDBOX_PUBLIC_URL')?.replace(/\/+$/, '');
const stateFile = r.string('SANDBOX_STATE_FILE', '.local/sandbox/counterparts.json');
const partyOf = (name: string, fallback: string) => {
  const [countryCode = '', partyId = ''] = r.string(name, fallback).toUpperCase().split('/');
  if (!/^[A-Z]{2}$/.test(countryCode) || !/^[A-Z0-9]{3}$/.test(partyId)) r.problem(`${name} must be CC/PID (e.g. ${fallback})`);
  return { countryCode, partyId };
};
const cpo = partyOf('SANDBOX_CPO', 'NL/SBX');
const emsp = partyOf('SANDBOX_EMSP', 'DE/SBX');
const routeEveryMs = r.int('SANDBOX_ROUTE_EVERY_MS', 2_000, { min: 100 });
const cpoTiming = {
  evseStatusEveryMs: r.int('SANDBOX_EVSE_STATUS_EVERY_MS', 60_000, { min: 100 }),
  sessionTickMs: r.int('SANDBOX_SESSION_TICK_MS', 5_000, { min: 100 }),
  maxSessionMs: r.int('SANDBOX_MAX_SESSION_MS', 30 * 60_000, { min: 1_000 }),
};
const emspTiming = { pullEveryMs: r.int('SANDBOX_PULL_EVERY_MS', 60_000, { min: 1_000 }) };
const level = r.string('LOG_LEVEL', 'info');
r.done();

const logger = createLogger({ service: 'sandbox', level });
const pool = createPool(databaseUrl, { max: 2, application: 'sandbox', onIdleError: (err) => logger.warn('idle Postgres connection lost', { err }) });
// The client's own notices (e.g. on the idempotent producer's retries) are no sandbox news: errors only.
const eventLog = await createEventLog({ brokers, ...kafkaSecurity, clientId: 'sandbox', topicPrefix, logger: createLogger({ service: 'sandbox', level: 'error' }) });

const sandbox = await startSandbox({
  hubUrl,
  host,
  port,
  publicBaseUrl,
  cpo,
  emsp,
  operator: { store: postgresRegistryStore(pool), source: 'sandbox', actor: 'sandbox' },
  // As hubctl: the registry change is published at once (the prober relays it otherwise).
  publishAudit: async () => {
    await drainOutbox(pool, (batch) => appendInOrder(eventLog, batch)).catch((err: unknown) => logger.warn('sandbox: audit events left for the prober to relay', { err }));
  },
  loadState: () => (existsSync(stateFile) ? (JSON.parse(readFileSync(stateFile, 'utf8')) as SandboxState) : {}),
  saveState: (state) => {
    mkdirSync(dirname(stateFile), { recursive: true });
    writeFileSync(stateFile, JSON.stringify(state), { mode: 0o600 });
  },
  logger,
  routeEveryMs,
  hubTimeoutMs: 15_000,
  cpoTiming,
  emspTiming,
}).catch(async (e: unknown) => {
  logger.error('sandbox failed to start', { err: e });
  await Promise.allSettled([eventLog.close(), pool.end()]);
  process.exit(1);
});
logger.info('sandbox running', { url: sandbox.url });

let stopping = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    if (stopping) return;
    stopping = true;
    void sandbox
      .stop()
      .then(() => Promise.allSettled([eventLog.close(), pool.end()]))
      .finally(() => process.exit(0));
  });
}
