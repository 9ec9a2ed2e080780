import { randomUUID } from 'node:crypto';
import { appendInOrder, DEFAULT_APPEND_TIMEOUT_MS } from '@hub/event-log';
import { checkCdrSettleWindow } from '@hub/modules';
import { Counter, Gauge, type Logger } from '@hub/observability';
import { checkRegisteredPartner, ocpiPartnerClient, type PartnerCheckReport } from '@hub/partners';
import { aesGcmTokenCipher, createOutboxRelay, probePlatform, type ProbeDeps } from '@hub/registry';
import { startServiceShell } from '@hub/service-kit';
import { advisoryLease, drainOutbox, LEASE_KEYS, partnerCheckSubjects, pendingOutbox, postgresCdrReceipts, postgresRegistryStore, pruneExpired, recordPartnerCheck } from '@hub/store';
import { appendUnappendedCdrs } from './cdr-relay.ts';
import type { ProberConfig } from './config.ts';

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
  const up = new Gauge({
    name: 'hub_partner_up',
    help: '1 when the last probe of the partner platform found OCPI 2.2.1, else 0; parties lists its cc/pid/role',
    labelNames: ['platform', 'parties'],
    registers: [registry],
  });
  const probes = new Counter({ name: 'hub_partner_probes_total', help: 'Health probes by result', labelNames: ['result'], registers: [registry] });
  const outboxGauge = new Gauge({ name: 'hub_registry_outbox_pending', help: 'Registry audit events not yet on Kafka', registers: [registry] });
  const store = postgresRegistryStore(pool);
  const partners = ocpiPartnerClient({ policy: { allowHttp: config.allowHttpPartners, allowedHosts: config.partnerAllowedHosts }, timeoutMs: config.timeoutMs });
  const deps: ProbeDeps = { store, partners, cipher: aesGcmTokenCipher(config.secretKey), source: 'prober', health: { offlineAfter: config.offlineAfterProbes, onlineAfter: config.onlineAfterProbes } };
  const unappendedGauge = new Gauge({ name: 'hub_cdrs_unappended', help: 'CDRs received and stored but not yet on Kafka', registers: [registry] });
  const deliveries = postgresCdrReceipts(pool);
  const reappends = new Counter({
    name: 'hub_cdr_reappends_total',
    help: 'CDRs whose append had not completed, taken again (a CPO retry at the ingress, the relay at the prober): appended, or already_present in ocpi.cdrs.v1 and only marked appended',
    labelNames: ['outcome'],
    registers: [registry],
  });
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

  const probeIfActive = async () => {
    if (await holdsLease()) await probeAll();
  };
  const timer = setInterval(() => void probeIfActive(), config.intervalMs);
  void probeIfActive();
  // Partner check (docs/how-to/partner-check.md): what `hubctl partner check` runs, on every registered
  // platform every PARTNER_CHECK_INTERVAL_MS, one platform at a time (it is a dozen GETs each, and no
  // hurry); the last result is stored for hubctl status and party show. It does not change health:
  // that stays with the probe and its hysteresis (docs/decisions/0005-partner-health-hysteresis.md).
  const checkFailures = new Gauge({
    name: 'hub_partner_check_failures',
    help: 'Failed checks in the last partner check of the platform (0: all passed); parties lists its cc/pid/role',
    labelNames: ['platform', 'parties'],
    registers: [registry],
  });
  const checkLastRun = new Gauge({
    name: 'hub_partner_check_last_run_timestamp_seconds',
    help: 'When the last partner check of the platform ran (Unix seconds)',
    labelNames: ['platform', 'parties'],
    registers: [registry],
  });
  const checkOptions = { policy: { allowHttp: config.allowHttpPartners, allowedHosts: config.partnerAllowedHosts }, timeoutMs: config.timeoutMs, hub: config.hubParty, client: partners };
  let checking: Promise<Map<string, PartnerCheckReport>> | undefined;
  const checkAll = (): Promise<Map<string, PartnerCheckReport>> => {
    checking ??= (async () => {
      const reports = new Map<string, PartnerCheckReport>();
      for (const subject of await partnerCheckSubjects(pool)) {
        // One platform that cannot be checked (a token sealed under another key, Postgres away for a
        // moment) is logged and skipped; the others are still checked.
        let report: PartnerCheckReport;
        try {
          report = await checkRegisteredPartner(subject, (sealed) => deps.cipher.open(sealed), checkOptions);
          await recordPartnerCheck(pool, subject.platformId, report, 'prober');
        } catch (e) {
          logger.warn('partner check not run for a platform', { platformId: subject.platformId, err: e });
          continue;
        }
        const labels = { platform: subject.platformId, parties: subject.parties.map((p) => `${p.countryCode}/${p.partyId}/${p.role}`).join(',') };
        checkFailures.set(labels, report.failures);
        checkLastRun.set(labels, Date.parse(report.checked_at) / 1000);
        if (!report.ok) logger.warn('partner check failed', { platformId: subject.platformId, failures: report.checks.filter((c) => !c.ok).map((c) => `${c.check}: ${c.reason}`) });
        reports.set(subject.platformId, report);
      }
      return reports;
    })().finally(() => {
      checking = undefined;
    });
    return checking;
  };
  const checkIfActive = async () => {
    if (await holdsLease()) await checkAll().catch((e: unknown) => logger.warn('partner check round failed; it runs again at the next interval', { err: e }));
  };
  const checkTimer = config.partnerCheckIntervalMs > 0 ? setInterval(() => void checkIfActive(), config.partnerCheckIntervalMs) : undefined;
  // Retention (docs/decisions/0006-retention.md): the active replica prunes done rows in small batches.
  const pruned = new Counter({ name: 'hub_retention_pruned_rows_total', help: 'Rows deleted once older than their retention, by table', labelNames: ['table'], registers: [registry] });
  let pruning: Promise<void> | undefined;
  const pruneIfActive = () => {
    pruning ??= (async () => {
      if (!(await holdsLease())) return;
      const counts = await pruneExpired(pool, config.retention, { pauseMs: 20 });
      for (const [table, n] of Object.entries(counts)) if (n > 0) pruned.inc({ table }, n);
      if (Object.values(counts).some((n) => n > 0)) logger.info('pruned rows older than their retention', counts);
    })()
      .catch((e: unknown) => {
        logger.warn('pruning failed; it is tried again at the next interval', { err: e });
      })
      .finally(() => {
        pruning = undefined;
      });
    return pruning;
  };
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
      await checking?.catch(() => undefined);
      clearInterval(pruneTimer);
      await round;
      await pruning;
      await relay.stop();
      await cdrRelay.stop();
      await lease.release();
      await partners.close().catch(() => undefined);
      await shell.stop();
    },
  };
}
