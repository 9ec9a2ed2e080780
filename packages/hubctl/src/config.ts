import { configReader, type ConfigReader, DEFAULT_DATABASE_URL, DEFAULT_KAFKA_BROKERS, readHubParty, readKafkaSecurity, readSecretKey, type Env, type KafkaSecurity } from '@hub/config';

// hubctl's settings (docs/reference/configuration.md): main.ts hands it the environment.

export interface HubctlConfig {
  readonly databaseUrl: string;
  readonly brokers: string[];
  readonly topicPrefix: string;
  readonly kafkaSecurity: KafkaSecurity;
  /** Empty without HUB_SECRET_KEY: only partner check opens partner tokens, and says so when the key is missing. */
  readonly secretKey: Buffer;
  readonly policy: { readonly allowHttp: boolean; readonly allowedHosts: string[] };
  readonly timeoutMs: number;
  readonly hub: { readonly countryCode: string; readonly partyId: string };
}

/** `r` is a recording reader when infra/generate-configuration-doc.ts lists the variables read. */
export function readHubctlConfig(env: Env, r: ConfigReader = configReader(env)): HubctlConfig {
  const databaseUrl = r.url('DATABASE_URL', DEFAULT_DATABASE_URL);
  const brokers = r.list('KAFKA_BROKERS', DEFAULT_KAFKA_BROKERS);
  const topicPrefix = r.optionalString('TOPIC_PREFIX') ?? '';
  const kafkaSecurity = readKafkaSecurity(r);
  // partner check calls the partner as the prober does: its key, outbound policy, timeout and hub party.
  const secretKey = r.optionalString('HUB_SECRET_KEY') === undefined ? Buffer.alloc(0) : readSecretKey(r);
  const policy = { allowHttp: r.bool('ALLOW_HTTP_PARTNER_URLS', false), allowedHosts: r.list('PARTNER_ALLOWED_HOSTS') };
  const timeoutMs = r.int('PROBE_TIMEOUT_MS', 10_000, { min: 100 });
  const hub = readHubParty(r);
  r.done();
  return { databaseUrl, brokers, topicPrefix, kafkaSecurity, secretKey, policy, timeoutMs, hub };
}
