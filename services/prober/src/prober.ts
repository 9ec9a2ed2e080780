import { appendInOrder, DEFAULT_APPEND_TIMEOUT_MS } from '@hub/event-log';
import { checkCdrSettleWindow } from '@hub/modules';
import { Counter, Gauge, type Logger } from '@hub/observability';
import { ocpiPartnerClient, type PartnerCheckReport } from '@hub/partners';
import { aesGcmTokenCipher, createOutboxRelay, type ProbeDeps } from '@hub/registry';
import { startServiceShell, type ServiceShell } from '@hub/service-kit';
import { advisoryLease, drainOutbox, LEASE_KEYS, pendingOutbox, postgresCdrReceipts, postgresRegistryStore } from '@hub/store';
import { appendUnappendedCdrs } from './cdr-relay.ts';
import type { ProberConfig } from './config.ts';
import { partnerCheckRounds, partnerProbeRounds, retentionPruning } from './prober-rounds.ts';

// Health prober (interface document, What the service does 9): every interval, GET /ocpi/versions on
// each registered partner with its token; results feed hubclientinfo and hub_partner_up. It also runs
// the safety nets for what should be on Kafka and is not yet: registry audit events (the outbox) and
// received CDRs whose append at the ingress never completed.

export interface RunningProber {
  readonly logger: Logger;
  readonly operatorPort: number;
  /** Runs one probe round now, lease or not (tests). */
  probeAll(): Promise<void>;
  /** Runs the partner check on every registered platform now, lease or not (tests); resolves to the reports by platform. */
  checkAll(): Promise<Map<string, PartnerCheckReport>>;
  stop(): Promise<void>;
}

export async function startProber(config: ProberConfig, options: { logStream?: NodeJS.WritableStream } = {}): Promise<RunningProber> {
  // The shell every service starts with (service-kit); /healthz asks Postgres only, as before.
  const shell = await startServiceShell('prober', config, { ...options, poolMax: 4, health: 'postgres', secretKey: config.secretKey });
  const { logger, metrics: registry, pool, eventLog } = shell;
  const store = postgresRegistryStore(pool);
  const partners = ocpiPartnerClient({ policy: { allowHttp: config.allowHttpPartners, allowedHosts: config.partnerAllowedHosts }, timeoutMs: config.timeoutMs });
  const deps: ProbeDeps = { store, partners, cipher: aesGcmTokenCipher(config.secretKey), source: 'prober', health: { offlineAfter: config.offlineAfterProbes, onlineAfter: config.onlineAfterProbes } };
  // One active prober among replicas (README, Running replicas): the holder of a Postgres advisory
  // lease probes partners and relays CDRs; the others stand by and take over at their next interval.
  const active = new Gauge({ name: 'hub_prober_active', help: '1 while this replica holds the prober lease (probes partners, relays CDRs); 0 on a standby', registers: [registry] });
  const lease = advisoryLease(pool, LEASE_KEYS.prober, (held) => {
    active.set(held ? 1 : 0);
    logger.info(held ? 'prober lease taken: this replica probes partners' : 'prober lease lost: standing by');
  });
  const holdsLease = () =>
    lease.hold().catch((e: unknown) => {
      logger.warn('prober lease not checked (Postgres unreachable)', { err: e });
      return false;
    });
  const { cdrRelay, relay } = startSafetyNets(shell, config, holdsLease);

  const { probeAll, current: probeRound } = partnerProbeRounds(registry, deps, logger, config.concurrency, () => relay.kick());
  const probeIfActive = async () => {
    if (await holdsLease()) await probeAll();
  };
  const timer = setInterval(() => void probeIfActive(), config.intervalMs);
  void probeIfActive();
  const checkOptions = { policy: { allowHttp: config.allowHttpPartners, allowedHosts: config.partnerAllowedHosts }, timeoutMs: config.timeoutMs, hub: config.hubParty, client: partners };
  const { checkAll, current: checkRound } = partnerCheckRounds(pool, registry, deps, checkOptions, logger);
  const checkIfActive = async () => {
    if (await holdsLease()) await checkAll().catch((e: unknown) => logger.warn('partner check round failed; it runs again at the next interval', { err: e }));
  };
  const checkTimer = config.partnerCheckIntervalMs > 0 ? setInterval(() => void checkIfActive(), config.partnerCheckIntervalMs) : undefined;
  const { pruneIfActive, current: pruneRound } = retentionPruning(pool, registry, config.retention, logger, holdsLease);
  const pruneTimer = setInterval(() => void pruneIfActive(), config.pruneIntervalMs);
  void checkCdrSettleWindow(eventLog, config.cdrRelayAfterSeconds, DEFAULT_APPEND_TIMEOUT_MS, (m) => logger.warn(m));
  logger.info('prober running', { intervalMs: config.intervalMs, partnerCheckIntervalMs: config.partnerCheckIntervalMs, operatorPort: shell.operator.port });
  return {
    logger,
    operatorPort: shell.operator.port,
    probeAll,
    checkAll,
    async stop() {
      clearInterval(timer);
      clearInterval(checkTimer);
      await checkRound()?.catch(() => undefined);
      clearInterval(pruneTimer);
      await probeRound();
      await pruneRound();
      await relay.stop();
      await cdrRelay.stop();
      await lease.release();
      await partners.close().catch(() => undefined);
      await shell.stop();
    },
  };
}

/**
 * The safety nets for what should be on Kafka and is not yet: received CDRs whose append at the
 * ingress never completed (relayed by the lease holder only), and the registry outbox.
 */
function startSafetyNets(shell: ServiceShell, config: ProberConfig, holdsLease: () => Promise<boolean>) {
  const { logger, metrics: registry, pool, eventLog } = shell;
  const outboxGauge = new Gauge({ name: 'hub_registry_outbox_pending', help: 'Registry audit events not yet on Kafka', registers: [registry] });
  const unappendedGauge = new Gauge({ name: 'hub_cdrs_unappended', help: 'CDRs received and stored but not yet on Kafka', registers: [registry] });
  const deliveries = postgresCdrReceipts(pool);
  const reappends = new Counter({
    name: 'hub_cdr_reappends_total',
    help: 'CDRs whose append had not completed, taken again (a CPO retry at the ingress, the relay at the prober): appended, or already_present in ocpi.cdrs.v1 and only marked appended',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const cdrRelay = createOutboxRelay({
    intervalMs: 5_000,
    onError: (e) => logger.warn('unappended CDRs not appended yet', { err: e }),
    drain: async () => {
      if (!(await holdsLease())) return 0;
      const n = await appendUnappendedCdrs({ deliveries, eventLog, logger, source: config.eventSource, reappends }, config.cdrRelayAfterSeconds);
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

  return { cdrRelay, relay };
}
