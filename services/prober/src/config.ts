import { configReader, type ConfigReader, readCommonConfig, readEventSource, readHubParty, readSecretKey, type CommonConfig, type Env } from '@hub/config';
import type { RetentionPolicy } from '@hub/store';

export interface ProberConfig extends CommonConfig {
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly concurrency: number;
  readonly secretKey: Buffer;
  readonly allowHttpPartners: boolean;
  readonly partnerAllowedHosts: string[];
  /** A received CDR not on Kafka after this long (its append failed; the CPO did not retry) is appended by the prober. */
  readonly cdrRelayAfterSeconds: number;
  /** Failed probes in a row before a CONNECTED partner is OFFLINE (hysteresis: @hub/registry health.ts). */
  readonly offlineAfterProbes: number;
  /** Good probes in a row before an OFFLINE partner is CONNECTED again. */
  readonly onlineAfterProbes: number;
  /** How long done rows are kept (docs/decisions/0006-retention.md); pruned every pruneIntervalMs by the active prober. */
  readonly retention: RetentionPolicy;
  readonly pruneIntervalMs: number;
  /** ce_source of the CDR events it relays: the ingress's (README, The CDR topic). */
  readonly eventSource: string;
  /** How often the active prober runs the partner check on every registered platform (docs/how-to/partner-check.md); 0: never. */
  readonly partnerCheckIntervalMs: number;
  /** The hub's own party: OCPI-from of the partner check's probes. */
  readonly hubParty: { readonly countryCode: string; readonly partyId: string };
}

const DAY_MS = 86_400_000;

/** `r` is a recording reader when infra/generate-configuration-doc.ts lists the variables read. */
export function readProberConfig(env: Env, r: ConfigReader = configReader(env)): ProberConfig {
  const config: ProberConfig = {
    ...readCommonConfig(r, 9467),
    intervalMs: r.int('PROBE_INTERVAL_MS', 180_000, { min: 100 }),
    timeoutMs: r.int('PROBE_TIMEOUT_MS', 10_000, { min: 100 }),
    concurrency: r.int('PROBE_CONCURRENCY', 8, { min: 1, max: 256 }),
    secretKey: readSecretKey(r),
    allowHttpPartners: r.bool('ALLOW_HTTP_PARTNER_URLS', false),
    partnerAllowedHosts: r.list('PARTNER_ALLOWED_HOSTS'),
    cdrRelayAfterSeconds: r.int('CDR_RELAY_AFTER_SECONDS', 60, { min: 1 }),
    offlineAfterProbes: r.int('PROBE_OFFLINE_AFTER', 3, { min: 1, max: 100 }),
    onlineAfterProbes: r.int('PROBE_ONLINE_AFTER', 2, { min: 1, max: 100 }),
    retention: {
      deliveredMs: r.int('RETAIN_DELIVERED_DAYS', 30, { min: 1, max: 3650 }) * DAY_MS,
      finishedCommandsMs: r.int('RETAIN_COMMANDS_DAYS', 30, { min: 1, max: 3650 }) * DAY_MS,
      resolvedQuarantineMs: r.int('RETAIN_RESOLVED_QUARANTINE_DAYS', 90, { min: 1, max: 3650 }) * DAY_MS,
      projectionRejectsMs: r.int('RETAIN_PROJECTION_REJECTS_DAYS', 30, { min: 1, max: 3650 }) * DAY_MS,
    },
    pruneIntervalMs: r.int('PRUNE_INTERVAL_MS', 600_000, { min: 100 }),
    eventSource: readEventSource(r),
    partnerCheckIntervalMs: r.int('PARTNER_CHECK_INTERVAL_MS', 3_600_000, { min: 0 }),
    hubParty: readHubParty(r),
  };
  r.done();
  return config;
}
