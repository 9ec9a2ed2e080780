import { randomUUID } from 'node:crypto';
import { Counter, Gauge, type Logger, type Registry } from '@hub/observability';
import { checkRegisteredPartner, type PartnerCheckOptions, type PartnerCheckReport } from '@hub/partners';
import { probePlatform, type ProbeDeps } from '@hub/registry';
import { partnerCheckSubjects, pruneExpired, recordPartnerCheck, type Database, type RetentionPolicy } from '@hub/store';

// The prober's three rounds (prober.ts): partner health probes, partner checks and retention pruning.
// Each runs at most once at a time: a call while a round runs joins it.

/** A probe round: GET /ocpi/versions on every registered partner, `concurrency` at a time. */
export function partnerProbeRounds(registry: Registry, deps: ProbeDeps, logger: Logger, concurrency: number, afterRound: () => void) {
  const up = new Gauge({
    name: 'hub_partner_up',
    help: '1 when the last probe of the partner platform found OCPI 2.2.1, else 0; parties lists its cc/pid/role',
    labelNames: ['platform', 'parties'],
    registers: [registry],
  });
  const probes = new Counter({ name: 'hub_partner_probes_total', help: 'Health probes by result', labelNames: ['result'], registers: [registry] });
  let round: Promise<void> | undefined;
  const probeAll = (): Promise<void> => {
    if (round) return round;
    round = (async () => {
      const platforms = await deps.store.registeredPlatforms();
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
      await Promise.all(Array.from({ length: Math.min(concurrency, platforms.length) }, worker));
      afterRound();
    })()
      .catch((e: unknown) => {
        logger.error('probe round failed', { err: e });
      })
      .finally(() => {
        round = undefined;
      });
    return round;
  };
  return { probeAll, current: () => round };
}

// Partner check (docs/how-to/partner-check.md): what `hubctl partner check` runs, on every registered
// platform every PARTNER_CHECK_INTERVAL_MS, one platform at a time (it is a dozen GETs each, and no
// hurry); the last result is stored for hubctl status and party show. It does not change health:
// that stays with the probe and its hysteresis (docs/decisions/0005-partner-health-hysteresis.md).
export function partnerCheckRounds(pool: Database, registry: Registry, deps: ProbeDeps, checkOptions: PartnerCheckOptions, logger: Logger) {
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
  return { checkAll, current: () => checking };
}

// Retention (docs/decisions/0006-retention.md): the active replica prunes done rows in small batches.
export function retentionPruning(pool: Database, registry: Registry, retention: RetentionPolicy, logger: Logger, holdsLease: () => Promise<boolean>) {
  const pruned = new Counter({ name: 'hub_retention_pruned_rows_total', help: 'Rows deleted once older than their retention, by table', labelNames: ['table'], registers: [registry] });
  let pruning: Promise<void> | undefined;
  const pruneIfActive = () => {
    pruning ??= (async () => {
      if (!(await holdsLease())) return;
      const counts = await pruneExpired(pool, retention, { pauseMs: 20 });
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
  return { pruneIfActive, current: () => pruning };
}
