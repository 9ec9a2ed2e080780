import { configReader, readCommonConfig, readEventSource, readSecretKey, type CommonConfig, type Env } from '@hub/config';

export interface ProberConfig extends CommonConfig {
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly concurrency: number;
  readonly secretKey: Buffer;
  readonly allowHttpPartners: boolean;
  readonly partnerAllowedHosts: string[];
  /** A received CDR not on Kafka after this long (its append failed; the CPO did not retry) is appended by the prober. */
  readonly cdrRelayAfterSeconds: number;
  /** ce_source of the CDR events it relays: the ingress's (README, The CDR topic). */
  readonly eventSource: string;
}

export function readProberConfig(env: Env): ProberConfig {
  const r = configReader(env);
  const config: ProberConfig = {
    ...readCommonConfig(r, 9467),
    intervalMs: r.int('PROBE_INTERVAL_MS', 180_000, { min: 100 }),
    timeoutMs: r.int('PROBE_TIMEOUT_MS', 10_000, { min: 100 }),
    concurrency: r.int('PROBE_CONCURRENCY', 8, { min: 1, max: 256 }),
    secretKey: readSecretKey(r),
    allowHttpPartners: r.bool('ALLOW_HTTP_PARTNER_URLS', false),
    partnerAllowedHosts: r.list('PARTNER_ALLOWED_HOSTS'),
    cdrRelayAfterSeconds: r.int('CDR_RELAY_AFTER_SECONDS', 60, { min: 1 }),
    eventSource: readEventSource(r),
  };
  r.done();
  return config;
}
