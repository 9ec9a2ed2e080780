import { isIP } from 'node:net';
import { configReader, type ConfigReader, readBreakerConfig, readEventSource, readHubParty, readCommonConfig, readSecretKey, type BreakerConfig, type CommonConfig, type Env } from '@hub/config';

// Ingress configuration; every variable and default is listed in the README (Configuration).
export interface IngressConfig extends CommonConfig {
  readonly host: string;
  readonly port: number;
  /**
   * Base URL partners reach the hub at; versions and Link URLs are built from it. Undefined: the
   * address the ingress actually listens on (HUB_PORT=0 picks a free port).
   */
  readonly publicBaseUrl: string | undefined;
  /**
   * development (the default of a checkout) or production (the image's default): production refuses
   * to start without an https HUB_PUBLIC_URL, since partners talk HTTPS only (OCPI 2.2.1
   * transport_and_format.asciidoc, Security and authentication; docs/how-to/deploy-kubernetes.md, TLS).
   */
  readonly environment: 'development' | 'production';
  /**
   * A sandbox hub (HUB_SANDBOX=true, set by `npm run sandbox`): every answer carries
   * `X-Hub-Environment: sandbox` so a partner sees which hub it talks to (docs/how-to/sandbox.md).
   */
  readonly sandbox: boolean;
  /**
   * Peers whose X-Forwarded-For is believed (addresses and CIDR blocks: a TLS-terminating proxy or
   * Ingress controller). From any other peer the header is ignored and its own address is the client's.
   */
  readonly trustedProxies: string[];
  /** PEM certificate (chain) and key: the ingress serves HTTPS itself, picking them up again when they change. */
  readonly tls: { readonly certFile: string; readonly keyFile: string } | undefined;
  readonly secretKey: Buffer;
  readonly hub: { countryCode: string; partyId: string; name: string };
  readonly maxBodyBytes: number;
  readonly defaultPageLimit: number;
  readonly maxPageLimit: number;
  readonly partnerTimeoutMs: number;
  readonly allowHttpPartners: boolean;
  readonly partnerAllowedHosts: string[];
  readonly accessLog: 'all' | 'errors';
  readonly callerCacheTtlMs: number;
  readonly locationListsPerMinute: number;
  /** Token list pulls by CPOs per minute per party (the interface document names no limit: as location lists). */
  readonly tokenListsPerMinute: number;
  readonly readYourWritesTimeoutMs: number;
  /** The dispatcher's consumer group: a Session PATCH waits for its positions (known-sessions.ts). */
  readonly dispatcherGroupId: string;
  readonly appendTimeoutMs: number;
  /**
   * How long after an append of a CDR began it is taken as settled (CDR_RELAY_AFTER_SECONDS, as the
   * prober's relay): a CPO's retry earlier than that is answered "retry later", a later one searches
   * the CDR's partition before appending (docs/decisions/0003-each-cdr-once.md).
   */
  readonly cdrSettleSeconds: number;
  /** ce_source of the CDR events (README, The CDR topic). */
  readonly eventSource: string;
  readonly appendLingerMs: number;
  readonly authorizeTimeoutMs: number;
  readonly authorizationsPerMinute: number;
  readonly commandsPerMinute: number;
  readonly commandGraceSeconds: number;
  /** ChargingProfile requests (set, get, clear) per eMSP party and minute (interface document, Limits). */
  readonly chargingProfilesPerMinute: number;
  readonly responseUrlAllowedHosts: string[];
  /** The circuit breakers around Kafka and Postgres on the push path (docs/decisions/0002-fast-refusals.md). */
  readonly breaker: BreakerConfig;
  /** A Postgres query or connection request of the ingress not answered by then fails as unavailable. */
  readonly postgresTimeoutMs: number;
}

/**
 * `r` is a recording reader when infra/generate-configuration-doc.ts lists the variables read.
 * Long because: one configuration object, a line per setting, and the checks between settings.
 */
export function readIngressConfig(env: Env, r: ConfigReader = configReader(env)): IngressConfig {
  const environment = r.string('HUB_ENV', 'development');
  if (environment !== 'development' && environment !== 'production') r.problem(`HUB_ENV must be "development" or "production", got "${environment}"`);
  const publicUrl = r.optionalString('HUB_PUBLIC_URL') === undefined ? undefined : r.url('HUB_PUBLIC_URL').replace(/\/+$/, '');
  if (environment === 'production' && !publicUrl?.startsWith('https://')) {
    r.problem(`HUB_PUBLIC_URL must be an https URL outside development (HUB_ENV=production), got ${publicUrl === undefined ? 'none' : `"${publicUrl}"`}: partners reach the hub over HTTPS only`);
  }
  const trustedProxies = r.list('HUB_TRUSTED_PROXIES');
  for (const p of trustedProxies) if (parseAddressBlock(p) === undefined) r.problem(`HUB_TRUSTED_PROXIES: "${p}" is not an IP address or CIDR block`);
  const certFile = r.optionalString('HUB_TLS_CERT_FILE');
  const keyFile = r.optionalString('HUB_TLS_KEY_FILE');
  if ((certFile === undefined) !== (keyFile === undefined)) r.problem('HUB_TLS_CERT_FILE and HUB_TLS_KEY_FILE go together (a certificate needs its key)');
  const port = r.int('HUB_PORT', 8080, { min: 0, max: 65535 });
  const host = r.string('HUB_HOST', '127.0.0.1');
  // Every accepted push is an event in Kafka carrying its X-Request-ID and X-Correlation-ID, and every
  // refused request is logged, so a line per successful request is opt-in (it costs ~40% of the
  // throughput of a cheap GET: README, Benchmarks).
  const accessLog = r.string('ACCESS_LOG', 'errors');
  if (accessLog !== 'all' && accessLog !== 'errors') r.problem('ACCESS_LOG must be "all" or "errors"');
  const config: IngressConfig = {
    ...readCommonConfig(r, 9464),
    host,
    port,
    publicBaseUrl: publicUrl,
    environment: environment as 'development' | 'production',
    sandbox: r.bool('HUB_SANDBOX', false),
    trustedProxies,
    tls: certFile !== undefined && keyFile !== undefined ? { certFile, keyFile } : undefined,
    secretKey: readSecretKey(r),
    hub: {
      ...readHubParty(r),
      name: r.string('HUB_NAME', 'OCPI Roaming Hub'),
    },
    maxBodyBytes: r.int('MAX_BODY_BYTES', 1024 * 1024, { min: 1024 }),
    defaultPageLimit: r.int('PAGE_LIMIT_DEFAULT', 100, { min: 1 }),
    maxPageLimit: r.int('PAGE_LIMIT_MAX', 1000, { min: 1 }),
    partnerTimeoutMs: r.int('PARTNER_TIMEOUT_MS', 10_000, { min: 100 }),
    allowHttpPartners: r.bool('ALLOW_HTTP_PARTNER_URLS', false),
    partnerAllowedHosts: r.list('PARTNER_ALLOWED_HOSTS'),
    accessLog: accessLog as 'all' | 'errors',
    callerCacheTtlMs: r.int('CALLER_CACHE_TTL_MS', 30_000, { min: 0 }),
    locationListsPerMinute: r.int('RATE_LIMIT_LOCATION_LISTS', 200, { min: 1 }),
    tokenListsPerMinute: r.int('RATE_LIMIT_TOKEN_LISTS', 200, { min: 1 }),
    readYourWritesTimeoutMs: r.int('READ_YOUR_WRITES_TIMEOUT_MS', 2_000, { min: 0 }),
    dispatcherGroupId: r.string('DISPATCHER_GROUP_ID', 'dispatcher'),
    appendTimeoutMs: r.int('APPEND_TIMEOUT_MS', 10_000, { min: 100 }),
    cdrSettleSeconds: r.int('CDR_RELAY_AFTER_SECONDS', 60, { min: 1 }),
    eventSource: readEventSource(r),
    appendLingerMs: r.int('APPEND_LINGER_MS', 0, { min: 0, max: 100 }),
    authorizeTimeoutMs: r.int('AUTHORIZE_TIMEOUT_MS', 5_000, { min: 100 }),
    authorizationsPerMinute: r.int('RATE_LIMIT_AUTHORIZATIONS', 100, { min: 1 }),
    commandsPerMinute: r.int('RATE_LIMIT_COMMANDS', 50, { min: 1 }),
    commandGraceSeconds: r.int('COMMAND_GRACE_SECONDS', 10, { min: 0 }),
    chargingProfilesPerMinute: r.int('RATE_LIMIT_CHARGING_PROFILES', 50, { min: 1 }),
    responseUrlAllowedHosts: r.list('RESPONSE_URL_ALLOWED_HOSTS'),
    breaker: readBreakerConfig(r),
    postgresTimeoutMs: r.int('POSTGRES_TIMEOUT_MS', 10_000, { min: 100 }),
  };
  // An append must have ended (answered or given up) before a retry may take the CDR as settled.
  if (config.appendTimeoutMs >= config.cdrSettleSeconds * 1000) r.problem('APPEND_TIMEOUT_MS must be shorter than CDR_RELAY_AFTER_SECONDS (docs/decisions/0003-each-cdr-once.md)');
  r.done();
  return config;
}

/** An address or CIDR block of HUB_TRUSTED_PROXIES, or undefined when it is neither. */
export function parseAddressBlock(text: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const [address = '', prefixText, ...rest] = text.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return undefined;
  const max = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max || (prefixText !== undefined && !/^\d+$/.test(prefixText))) return undefined;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}
