import { configReader, type ConfigReader, readConsumerConfig, readHubParty, readSecretKey, type ConsumerConfig, type Env } from '@hub/config';

export interface DispatcherConfig extends ConsumerConfig {
  readonly secretKey: Buffer;
  readonly allowHttpPartners: boolean;
  readonly partnerAllowedHosts: string[];
  readonly deliveryTimeoutMs: number;
  /** Wait before retry n (1-based) after a failed attempt; after the last one a record is a dead letter. */
  readonly retryScheduleMs: number[];
  readonly concurrencyPerEmsp: number;
  readonly concurrency: number;
  readonly groupId: string;
  /** The hub's own party: OCPI-from of what the hub broadcasts (a token pushed with OCPI-to the hub). */
  readonly hubParty: { readonly countryCode: string; readonly partyId: string };
}

/** `r` is a recording reader when infra/generate-configuration-doc.ts lists the variables read. */
export function readDispatcherConfig(env: Env, r: ConfigReader = configReader(env)): DispatcherConfig {
  const schedule = r.list('DELIVERY_RETRY_SCHEDULE_MS', ['1000', '5000', '30000', '120000', '600000', '1800000', '3600000']).map(Number);
  if (schedule.some((n) => !Number.isInteger(n) || n < 0)) r.problem('DELIVERY_RETRY_SCHEDULE_MS must be a comma-separated list of milliseconds');
  const config: DispatcherConfig = {
    ...readConsumerConfig(r, 9466),
    secretKey: readSecretKey(r),
    allowHttpPartners: r.bool('ALLOW_HTTP_PARTNER_URLS', false),
    partnerAllowedHosts: r.list('PARTNER_ALLOWED_HOSTS'),
    deliveryTimeoutMs: r.int('DELIVERY_TIMEOUT_MS', 10_000, { min: 100 }),
    retryScheduleMs: schedule,
    concurrencyPerEmsp: r.int('DELIVERY_CONCURRENCY_PER_EMSP', 16, { min: 1, max: 256 }),
    concurrency: r.int('DELIVERY_CONCURRENCY', 64, { min: 1, max: 1024 }),
    groupId: r.string('DISPATCHER_GROUP_ID', 'dispatcher'),
    hubParty: readHubParty(r),
  };
  r.done();
  return config;
}
