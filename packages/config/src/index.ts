// Validated configuration. Only a service's src/main.ts reads process.env; it hands the environment to
// a reader from here, which parses every variable, applies its default and reports all problems at
// once instead of failing on the first. Every variable is described once, in setting-docs.ts.

import { readKafkaSecurity, type KafkaSecurity } from './kafka-security.ts';

export * from './kafka-security.ts';
export * from './setting-docs.ts';

export type Env = Readonly<Record<string, string | undefined>>;

export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

export interface ConfigReader {
  string(name: string, fallback?: string): string;
  optionalString(name: string): string | undefined;
  int(name: string, fallback: number, range?: { min?: number; max?: number }): number;
  bool(name: string, fallback: boolean): boolean;
  url(name: string, fallback?: string): string;
  list(name: string, fallback?: readonly string[]): string[];
  /** Records a problem found by a caller's own check. */
  problem(message: string): void;
  /** Throws ConfigError listing every problem seen by the calls above. */
  done(): void;
}

// Long because: one closure over the environment and the problems seen, with a short method per kind
// of value; its length is the kinds of value, not branching logic.
export function configReader(env: Env): ConfigReader {
  const problems: string[] = [];
  const raw = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  return {
    string(name, fallback) {
      const v = raw(name) ?? fallback;
      if (v === undefined) {
        problems.push(`${name} is required`);
        return '';
      }
      return v;
    },
    optionalString: raw,
    int(name, fallback, range = {}) {
      const v = raw(name);
      if (v === undefined) return fallback;
      const n = Number(v);
      if (!Number.isInteger(n)) {
        problems.push(`${name} must be an integer, got "${v}"`);
        return fallback;
      }
      if ((range.min !== undefined && n < range.min) || (range.max !== undefined && n > range.max)) {
        problems.push(`${name} must be within [${range.min ?? '-inf'}, ${range.max ?? 'inf'}], got ${n}`);
        return fallback;
      }
      return n;
    },
    bool(name, fallback) {
      const v = raw(name)?.toLowerCase();
      if (v === undefined) return fallback;
      if (['1', 'true', 'yes', 'on'].includes(v)) return true;
      if (['0', 'false', 'no', 'off'].includes(v)) return false;
      problems.push(`${name} must be a boolean (true/false), got "${v}"`);
      return fallback;
    },
    url(name, fallback) {
      const v = raw(name) ?? fallback;
      if (v === undefined) {
        problems.push(`${name} is required`);
        return '';
      }
      try {
        new URL(v);
      } catch {
        problems.push(`${name} must be a URL, got "${v}"`);
      }
      return v;
    },
    list(name, fallback = []) {
      const v = raw(name);
      return v === undefined ? [...fallback] : v.split(',').map((s) => s.trim()).filter(Boolean);
    },
    problem(message) {
      problems.push(message);
    },
    done() {
      if (problems.length > 0) throw new ConfigError(problems);
    },
  };
}

/** Settings every service shares: where Kafka and Postgres are, and how topics are named. */
export interface CommonConfig {
  readonly kafkaBrokers: string[];
  /** TLS and SASL for a secured cluster (KAFKA_SSL_*, KAFKA_SASL_*); empty for a plaintext one. */
  readonly kafkaSecurity: KafkaSecurity;
  readonly databaseUrl: string;
  /** Prepended to every topic name; lets test runs share a broker without sharing topics. */
  readonly topicPrefix: string;
  readonly logLevel: string;
  /** Port of the operator endpoints (/metrics, /healthz). 0 picks a free port. */
  readonly operatorPort: number;
}

export const DEFAULT_KAFKA_BROKERS = ['127.0.0.1:9092'];
export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/ocpi_hub';

export function readCommonConfig(r: ConfigReader, defaultOperatorPort: number): CommonConfig {
  return {
    kafkaBrokers: r.list('KAFKA_BROKERS', DEFAULT_KAFKA_BROKERS),
    kafkaSecurity: readKafkaSecurity(r),
    databaseUrl: r.url('DATABASE_URL', DEFAULT_DATABASE_URL),
    topicPrefix: r.optionalString('TOPIC_PREFIX') ?? '',
    logLevel: r.string('LOG_LEVEL', 'info'),
    operatorPort: r.int('OPERATOR_PORT', defaultOperatorPort, { min: 0, max: 65535 }),
  };
}

/** Settings of a service that consumes topics (projector, dispatcher). */
export interface ConsumerConfig extends CommonConfig {
  /** A partition on one offset (failing, or a batch not finishing) for longer than this is stuck: /healthz 503. */
  readonly consumerStuckAfterMs: number;
}

export function readConsumerConfig(r: ConfigReader, defaultOperatorPort: number): ConsumerConfig {
  return { ...readCommonConfig(r, defaultOperatorPort), consumerStuckAfterMs: r.int('CONSUMER_STUCK_AFTER_MS', 60_000, { min: 100 }) };
}

/** Reads the secret key that encrypts partner tokens at rest: 32 bytes, base64 or hex. */
export function readSecretKey(r: ConfigReader, name = 'HUB_SECRET_KEY'): Buffer {
  const v = r.string(name);
  if (!v) return Buffer.alloc(0);
  const key = /^[0-9a-f]{64}$/i.test(v) ? Buffer.from(v, 'hex') : Buffer.from(v, 'base64');
  if (key.length !== 32) {
    r.problem(`${name} must be 32 bytes, base64 or hex encoded`);
    return Buffer.alloc(0);
  }
  return key;
}

/**
 * The hub's own party (OCPI 2.2.1 transport_and_format.asciidoc, Message Routing): the ingress names it
 * in credentials answers and recognises it in OCPI-to headers as a Broadcast Push; the dispatcher
 * sends such a broadcast with it as OCPI-from. README, Configuration.
 */
export function readHubParty(r: ConfigReader): { readonly countryCode: string; readonly partyId: string } {
  return { countryCode: r.string('HUB_COUNTRY_CODE', 'NL').toUpperCase(), partyId: r.string('HUB_PARTY_ID', 'HUB').toUpperCase() };
}

/**
 * The ce_source of the hub's CDR events: the hub's public URL when HUB_PUBLIC_URL is set (one per
 * deployment), else `urn:ocpi:<country code>:<party id>` of the hub's own party. CloudEvents 1.0
 * (spec.md, source) asks that source + id be unique per event and recommends an absolute URI; every
 * service that appends CDR events reads it here, so the prober's relay of a CDR is the same event as
 * the ingress's append. README, The CDR topic.
 */
export function readEventSource(r: ConfigReader): string {
  if (r.optionalString('HUB_PUBLIC_URL') !== undefined) return r.url('HUB_PUBLIC_URL').replace(/\/+$/, '');
  return hubUrn(readHubParty(r));
}

/** The URN naming a hub by its own party (OCPI 2.2.1 credentials: country_code and party_id). */
export const hubUrn = (party: { countryCode: string; partyId: string }): string => `urn:ocpi:${party.countryCode}:${party.partyId}`;

/**
 * The ingress's circuit breakers around Kafka and Postgres (docs/decisions/0002-fast-refusals.md):
 * open once unavailability failures, `failures` or more with no success between, have gone on for
 * `openAfterMs`; answer pushes 503 at once while open; after `cooldownMs` let one probe through.
 * `enabled` false: every push waits for its dependency as before (for comparison runs).
 */
export interface BreakerConfig {
  readonly enabled: boolean;
  readonly failures: number;
  readonly openAfterMs: number;
  readonly cooldownMs: number;
}

export function readBreakerConfig(r: ConfigReader): BreakerConfig {
  return {
    enabled: r.bool('BREAKER_ENABLED', true),
    // Five failures over 1.5 s: a hung broker fails every append after APPEND_TIMEOUT_MS, so it opens
    // 1.5 s after the first timeout; a leader failover's failures stop sooner (README, Configuration).
    failures: r.int('BREAKER_FAILURES', 5, { min: 1 }),
    openAfterMs: r.int('BREAKER_OPEN_AFTER_MS', 1_500, { min: 0 }),
    cooldownMs: r.int('BREAKER_COOLDOWN_MS', 1_000, { min: 100 }),
  };
}
