import { configReader, type ConfigReader, type Env } from './index.ts';

// Every setting's description, in the order of docs/reference/configuration.md, which
// `node infra/generate-configuration-doc.ts` writes from this table and from the readers themselves:
// which services read a variable and its default come from running each service's reader with
// recordingReader, so neither can drift from the code. A new setting is one row here; the generator
// refuses a variable a reader asks for without one.

export interface SettingDoc {
  /** The variables of one row, described together. */
  readonly names: readonly string[];
  /**
   * The default column, when the readers' fallbacks do not say it well (a computed default, one per
   * service, a script's). The generator checks it names every fallback the readers give.
   */
  readonly default?: string;
  /** Users no reader stands for: the stack's scripts (`npm start`...), listed after the readers. */
  readonly alsoUsedBy?: string;
  readonly meaning: string;
}

export const SETTING_DOCS: readonly SettingDoc[] = [
  { names: ['KAFKA_BROKERS'], default: 'local broker (`127.0.0.1:9092`)', meaning: 'comma-separated brokers; set it to use an existing cluster' },
  { names: ['KAFKA_SSL'], default: '`true` when a `KAFKA_SSL_*` file or name is set, else `false`', alsoUsedBy: '`npm start`', meaning: 'TLS to the brokers; `true` alone trusts the system\'s CAs' },
  { names: ['KAFKA_SSL_CA_FILE'], default: 'none (system CAs)', alsoUsedBy: '`npm start`', meaning: 'PEM file of the CA(s) that signed the brokers\' certificates' },
  { names: ['KAFKA_SSL_CERT_FILE', 'KAFKA_SSL_KEY_FILE'], alsoUsedBy: '`npm start`', meaning: 'PEM client certificate and its key, for clusters that require mutual TLS (both or neither)' },
  { names: ['KAFKA_SSL_SERVERNAME'], default: 'the broker host', alsoUsedBy: '`npm start`', meaning: 'TLS server name sent and verified, when the broker addresses are not the names in the certificates' },
  { names: ['KAFKA_SASL_MECHANISM'], default: 'none (no SASL)', alsoUsedBy: '`npm start`', meaning: '`plain`, `scram-sha-256` or `scram-sha-512`' },
  { names: ['KAFKA_SASL_USERNAME', 'KAFKA_SASL_PASSWORD'], alsoUsedBy: '`npm start`', meaning: 'SASL login; required with `KAFKA_SASL_MECHANISM`; the password is never logged' },
  { names: ['KAFKA_VERSION'], default: '`4.4.0`', alsoUsedBy: '`npm start`, `npm test`, `npm run bench`', meaning: 'Apache Kafka release of the local brokers (ignored with `KAFKA_BROKERS`): a 4.x, or a 3.9.x such as `3.9.1` (what a managed 3.x cluster runs) ([decision 0010](../decisions/0010-kafka-4-by-default.md)); its jars are fetched once into `.local/kafka/<version>/libs`. Kafka has no downgrade: a release older than the last one that ran `.local/kafka/node-1` is refused ([switch the local Kafka release](../how-to/switch-kafka-release.md))' },
  { names: ['KAFKA_NODES'], default: '1', alsoUsedBy: '`npm start`', meaning: 'KRaft nodes of the local Kafka (ignored with `KAFKA_BROKERS`); 3 gives topics their real replication' },
  { names: ['DATABASE_URL'], meaning: 'Postgres database; set it to use an existing server. TLS settings go in its query: `sslmode=verify-full&sslrootcert=/path/ca.pem` (and `sslcert`, `sslkey` for a client certificate); note that pg treats `require` and `verify-ca` like `verify-full`, and `sslmode=no-verify` encrypts without checking the certificate' },
  { names: ['TOPIC_PREFIX'], meaning: 'prefix of every topic and consumer group name (`x` and `x.` both give `x.ocpi.locations.v1`); `npm start` creates the topics under it' },
  { names: ['HUB_CHANGE_RETENTION_MS'], default: '`2592000000` (30 days)', alsoUsedBy: '`npm start`, the image\'s `migrate`', meaning: 'retention of the locations, tariffs and tokens change topics when they are created (`-1`: forever); read models are rebuilt from the compacted snapshot topics plus this tail ([decision 0014](../decisions/0014-snapshot-topics.md)); an existing topic keeps its setting (change it with `kafka-configs`)' },
  { names: ['LOG_LEVEL'], meaning: 'winston level' },
  { names: ['OPERATOR_PORT'], default: '9464 ingress, 9465 projector, 9466 dispatcher, 9467 prober', meaning: '`/metrics` and `/healthz`; 0 picks a free port; under `npm start`, `INGRESS_OPERATOR_PORT`, `PROJECTOR_OPERATOR_PORT`, `DISPATCHER_OPERATOR_PORT`, `PROBER_OPERATOR_PORT` set each' },
  { names: ['PROJECTOR_NICENESS'], default: '10', alsoUsedBy: '`npm start`, `npm run sandbox`, `npm run bench`', meaning: 'how much lower the projector\'s CPU priority is than the other services\' (added by nice(1) to the launcher\'s niceness, 0 to 19), so partners\' requests go first on a shared host; `0`: the same priority ([decision 0018](../decisions/0018-partners-before-the-projector.md)). Without nice(1) on PATH the launcher says so and uses 0. In Kubernetes each service\'s CPU request sets its share instead' },
  { names: ['HUB_LOG_DIR'], default: '`.local/logs`', alsoUsedBy: '`npm start`', meaning: 'where the services\' log files go' },
  { names: ['HUB_PORT', 'HUB_HOST'], default: '`8080`, `127.0.0.1`', meaning: 'where the partner API listens' },
  { names: ['HUB_PUBLIC_URL'], default: '`http://HUB_HOST:HUB_PORT`', meaning: 'base URL partners use; versions and Link URLs are built from it. Also `ce_source` of CDR events (README, The CDR topic): set it the same for the ingress and the prober; unset, `ce_source` is `urn:ocpi:<HUB_COUNTRY_CODE>:<HUB_PARTY_ID>`' },
  { names: ['HUB_ENV'], default: '`development` (`production` in the image)', meaning: '`production` refuses to start unless `HUB_PUBLIC_URL` is an https URL (partners talk HTTPS only: [deploy-kubernetes](../how-to/deploy-kubernetes.md), TLS)' },
  { names: ['HUB_SANDBOX'], default: '`false` (`true` under `npm run sandbox`)', meaning: 'a sandbox hub: every answer carries `X-Hub-Environment: sandbox` ([sandbox reference](sandbox.md)); production answers are unchanged' },
  { names: ['SANDBOX_HUB_PORT', 'SANDBOX_PORT'], default: '`8090`, `8091`', alsoUsedBy: '`npm run sandbox`', meaning: 'the sandbox hub\'s partner API and its counterparts\' server' },
  { names: ['SANDBOX_INGRESS_OPERATOR_PORT', 'SANDBOX_PROJECTOR_OPERATOR_PORT', 'SANDBOX_DISPATCHER_OPERATOR_PORT', 'SANDBOX_PROBER_OPERATOR_PORT'], default: '9474-9477', alsoUsedBy: '`npm run sandbox`', meaning: 'the sandbox services\' `/metrics` and `/healthz`' },
  { names: ['SANDBOX_DIR', 'SANDBOX_LOG_DIR'], default: '`.local/sandbox`, `.local/logs/sandbox`', alsoUsedBy: '`npm run sandbox`, `npm run hubctl -- --sandbox`', meaning: 'the sandbox\'s `stack.env`, development key and counterparts\' tokens; its log files' },
  { names: ['SANDBOX_KAFKA_BROKERS', 'SANDBOX_DATABASE_URL', 'SANDBOX_TOPIC_PREFIX', 'SANDBOX_SECRET_KEY'], default: 'a broker on 9192, `ocpi_hub_sandbox`, `sandbox`, `.local/sandbox/secret.key`', alsoUsedBy: '`npm run sandbox`, `npm run hubctl -- --sandbox`', meaning: 'the sandbox\'s own clusters, topics and key (never `KAFKA_BROKERS`, `DATABASE_URL`, `TOPIC_PREFIX`, `HUB_SECRET_KEY`); the counterparts\' own variables: [sandbox reference](sandbox.md#configuration-of-the-counterparts)' },
  { names: ['HUB_TRUSTED_PROXIES'], meaning: 'comma-separated addresses and CIDR blocks (`10.0.0.0/8`, `fd00::/8`) of proxies in front of the ingress; `X-Forwarded-For` is believed only from them, and the client address in the request logs (`client`) is then the nearest hop that is not a trusted proxy; from any other peer, the peer\'s own address' },
  { names: ['HUB_TLS_CERT_FILE', 'HUB_TLS_KEY_FILE'], default: 'none (plain HTTP)', meaning: 'PEM certificate chain and key: the ingress serves HTTPS itself (TLS 1.2 and up) and loads them again when either file changes, keeping the previous pair while the new one does not load; both or neither' },
  { names: ['HUB_SECRET_KEY'], default: 'generated once into `.local/secret.key` by `npm start`', meaning: '32 bytes, base64 or hex; seals partner tokens (the dispatcher opens them to deliver, hubctl for `partner check`; `npm run hubctl` passes the development key), and wraps the data keys of drivers\' tokens that seal their personal fields in the tokens, sessions, CDRs and commands topics (every service that appends or reads them needs the same key; hubctl for `erase token`, replays and rebuilds: [erasing a driver\'s data](../how-to/erase-driver-data.md))' },
  { names: ['HUB_COUNTRY_CODE', 'HUB_PARTY_ID', 'HUB_NAME'], meaning: 'the hub\'s own role in credentials answers; OCPI-to naming it is a Broadcast Push, which the dispatcher sends with it as OCPI-from' },
  { names: ['MAX_BODY_BYTES'], meaning: 'request body limit' },
  { names: ['PAGE_LIMIT_DEFAULT', 'PAGE_LIMIT_MAX'], meaning: 'pagination' },
  { names: ['PARTNER_TIMEOUT_MS'], meaning: 'timeout of calls to partners during credentials exchanges' },
  { names: ['ALLOW_HTTP_PARTNER_URLS'], meaning: 'development switch: allow plain http partner URLs' },
  { names: ['PARTNER_ALLOWED_HOSTS'], meaning: 'hosts the hub may call although they are loopback or private' },
  { names: ['ACCESS_LOG'], meaning: '`errors` logs every request answered with HTTP >= 400 or OCPI != 1000; `all` adds a line per successful request (accepted pushes are already recorded as Kafka events with their request and correlation ids; `all` costs about 40% of a cheap GET\'s throughput)' },
  { names: ['CALLER_CACHE_TTL_MS'], meaning: 'upper bound on a cached caller should a NOTIFY be lost' },
  { names: ['PROBE_INTERVAL_MS', 'PROBE_TIMEOUT_MS', 'PROBE_CONCURRENCY'], meaning: 'health probing; the timeout is also that of each call of the partner check' },
  { names: ['PARTNER_CHECK_INTERVAL_MS'], default: '3600000 (1 h)', meaning: 'how often the active prober runs the partner check on every registered platform, one at a time ([partner check](../how-to/partner-check.md)); 0 never. The first round runs one interval after start; the last result is kept in Postgres across restarts' },
  { names: ['PROBE_OFFLINE_AFTER', 'PROBE_ONLINE_AFTER'], meaning: 'failed probes in a row before a CONNECTED partner is OFFLINE; good probes in a row before it is CONNECTED again' },
  { names: ['RETAIN_DELIVERED_DAYS', 'RETAIN_COMMANDS_DAYS', 'RETAIN_RESOLVED_QUARANTINE_DAYS', 'RETAIN_PROJECTION_REJECTS_DAYS'], meaning: 'how long done rows are kept: delivered sessions, CDRs and command results; commands no longer waiting for a result; quarantined records an operator resolved; events a read model did not apply ([decision 0006](../../docs/decisions/0006-retention.md))' },
  { names: ['PRUNE_INTERVAL_MS'], meaning: 'how often the active prober deletes rows past their retention (in batches of 1,000, skipping locked rows)' },
  { names: ['CDR_RELAY_AFTER_SECONDS'], meaning: 'how long after an append of a CDR began it is taken as settled: a received CDR still not on Kafka after this long is appended by the prober, and a CPO retry sooner is answered 503 with `Retry-After`; either looks for the CDR in its partition first (decision 0003). Must exceed `APPEND_TIMEOUT_MS`, and `APPEND_TIMEOUT_MS` + 1.5 x the brokers\' `replica.lag.time.max.ms` (checked at start, a warning)' },
  { names: ['RATE_LIMIT_LOCATION_LISTS'], meaning: 'location list requests per minute per party' },
  { names: ['RATE_LIMIT_TOKEN_LISTS'], meaning: 'token list requests (CPO pulls) per minute per party; the interface document names no limit, so as location lists' },
  { names: ['READ_YOUR_WRITES_TIMEOUT_MS'], meaning: 'how long an owner GET or an existence check waits for the projection (or, for a session PATCH, for the dispatcher)' },
  { names: ['APPEND_TIMEOUT_MS'], meaning: 'a push whose event Kafka has not acknowledged by then is answered 503' },
  { names: ['APPEND_LINGER_MS'], meaning: 'wait this long for more events before a produce request (appends during a send always share the next one)' },
  { names: ['BREAKER_FAILURES', 'BREAKER_OPEN_AFTER_MS'], meaning: 'the circuit breaker of Kafka (or of Postgres) opens once that many unavailability failures in a row (timeouts, lost or refused connections; no success between) have gone on for that long; then pushes that need it are answered 503 with `Retry-After` at once (docs/decisions/0002-fast-refusals.md)' },
  { names: ['BREAKER_COOLDOWN_MS'], meaning: 'how long an open breaker refuses before it lets one probe through; the probe\'s success closes it' },
  { names: ['BREAKER_ENABLED'], meaning: '`false`: every push waits for its dependency (comparison runs)' },
  { names: ['POSTGRES_TIMEOUT_MS'], meaning: 'a Postgres query or connection request of the ingress not answered by then fails as unavailable (503)' },
  { names: ['PROJECTOR_GROUP_ID'], meaning: 'Kafka consumer group (a second group replays into another database)' },
  { names: ['PROJECTOR_START_FROM'], meaning: '`snapshot`: an empty read model is loaded from the snapshot topics, which the projector keeps in step; `history`: a replay into another database reads the change topics from their start and neither loads nor writes a snapshot (ADR 0014)' },
  { names: ['CONSUMER_STUCK_AFTER_MS'], meaning: 'a partition on one offset (failing, or a batch not finishing) for longer is stuck: `/healthz` 503 (positions of another cluster or topic are `down` at once: see "Positions of another cluster or topic")' },
  { names: ['DELIVERY_RETRY_SCHEDULE_MS'], meaning: 'wait before each retry; after the last, a dead letter' },
  { names: ['DELIVERY_TIMEOUT_MS'], meaning: 'timeout of one delivery call' },
  { names: ['DELIVERY_CONCURRENCY_PER_EMSP', 'DELIVERY_CONCURRENCY'], meaning: 'deliveries in flight per eMSP and in all' },
  { names: ['DISPATCHER_GROUP_ID'], meaning: 'Kafka consumer group of the dispatcher (the ingress waits for its stored positions before refusing a session PATCH)' },
  { names: ['AUTHORIZE_TIMEOUT_MS'], meaning: 'timeout of real-time calls to partners (token authorization either way, commands)' },
  { names: ['RATE_LIMIT_AUTHORIZATIONS', 'RATE_LIMIT_COMMANDS', 'RATE_LIMIT_CHARGING_PROFILES'], meaning: 'per party and minute (charging profiles: set, get and clear together, per eMSP party)' },
  { names: ['COMMAND_GRACE_SECONDS'], meaning: 'added to the CPO\'s command (and charging profile request) timeout before the hub sends TIMEOUT (REJECTED for a charging profile request)' },
  { names: ['RESPONSE_URL_ALLOWED_HOSTS'], meaning: 'operator allow-list of command and charging profile response_url hosts beyond the eMSP\'s registered ones' },
];

/** One question a reader asked: its variable, how it parses it, and the default it falls back to. */
export interface SettingRead {
  readonly name: string;
  readonly kind: 'string' | 'optional' | 'int' | 'bool' | 'url' | 'list';
  /** Undefined: no default (optional, or required for string and url). */
  readonly fallback: string | number | boolean | readonly string[] | undefined;
}

/**
 * A reader that tells `record` every variable asked for, with its fallback, and never throws: done()
 * ignores the problems, so a service's whole reader runs without a valid environment.
 */
export function recordingReader(env: Env, record: (read: SettingRead) => void): ConfigReader {
  const r = configReader(env);
  return {
    string: (name, fallback) => (record({ name, kind: 'string', fallback }), r.string(name, fallback)),
    optionalString: (name) => (record({ name, kind: 'optional', fallback: undefined }), r.optionalString(name)),
    int: (name, fallback, range) => (record({ name, kind: 'int', fallback }), r.int(name, fallback, range)),
    bool: (name, fallback) => (record({ name, kind: 'bool', fallback }), r.bool(name, fallback)),
    url: (name, fallback) => (record({ name, kind: 'url', fallback }), r.url(name, fallback)),
    list: (name, fallback = []) => (record({ name, kind: 'list', fallback }), r.list(name, fallback)),
    problem: () => undefined,
    done: () => undefined,
  };
}
