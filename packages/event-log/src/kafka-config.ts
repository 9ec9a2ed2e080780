import { logLevel } from 'kafkajs';
import protocolErrors from 'kafkajs/src/protocol/error.js';

// Connection settings and log routing of the Kafka client (kafka-event-log.ts, kafka-access.ts).

export interface LogSink {
  error(message: string, meta?: object): void;
  warn(message: string, meta?: object): void;
  info(message: string, meta?: object): void;
  debug(message: string, meta?: object): void;
}

/** TLS towards the brokers: PEM CA, client certificate and key, server name (config KafkaTls). */
export interface KafkaTlsOptions {
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly servername?: string;
}

/** SASL login (config KafkaSasl); the password is never logged. */
export interface KafkaSaslOptions {
  readonly mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512';
  readonly username: string;
  readonly password: string;
}

export interface EventLogOptions {
  readonly brokers: readonly string[];
  readonly clientId: string;
  readonly ssl?: KafkaTlsOptions;
  readonly sasl?: KafkaSaslOptions;
  readonly topicPrefix?: string;
  readonly logger: LogSink;
  /** An append not acknowledged within this time fails (the caller answers "retry later"). */
  readonly appendTimeoutMs?: number;
  /**
   * How long an append that finds the producer idle waits for others to join its produce request
   * (Kafka's linger.ms). 0 sends at once; appends arriving during a send always share the next one.
   */
  readonly lingerMs?: number;
  /**
   * Called once per append when it settles: acknowledged ('ok') or failed or timed out ('error'),
   * with the logical topic, the number of events and the seconds from the append call (waiting for
   * the group commit's produce request included: what a caller waits) (metrics: hub_event_appends_total,
   * hub_event_append_duration_seconds).
   */
  readonly onAppendSettled?: (topic: string, outcome: 'ok' | 'error', events: number, seconds: number) => void;
}

const kafkaLevels: Record<number, keyof LogSink> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
  [logLevel.NOTHING]: 'debug',
};

/**
 * Kafka's retriable protocol errors ("The coordinator is loading", "The group coordinator is not
 * available", a leader moving): the client retries them itself, and they are routine while a broker
 * starts or a group forms. kafkajs logs every such response at ERROR; here they are debug lines. What
 * outlasts the retries still surfaces: connection errors, exhausted retries and consumer crashes are
 * other log lines, and the call fails.
 */
const retriableProtocolErrors = new Set(protocolErrors.errorCodes.filter((e) => e.retriable).map((e) => e.message));

export function kafkaLogLevel(level: number, namespace: string, log: { message: string; error?: unknown }): keyof LogSink {
  if (namespace === 'Connection' && log.message.startsWith('Response ') && typeof log.error === 'string' && retriableProtocolErrors.has(log.error)) return 'debug';
  // A consumer's JoinGroup answered with a retriable error (a fresh broker's "The coordinator is
  // loading" while it loads __consumer_offsets): kafkajs calls it a crash and rejoins 200 ms later.
  // Routine, so info; a crash of any other cause, exhausted retries included, stays an error.
  if (namespace === 'Consumer') {
    const crash = /^Crash: KafkaJSProtocolError: (.*)$/.exec(log.message);
    if (crash?.[1] !== undefined && retriableProtocolErrors.has(crash[1])) return 'info';
    if (log.message.startsWith('Restarting the consumer in ')) return 'info';
  }
  return kafkaLevels[level] ?? 'info';
}

/** The Kafka client's connection settings (kafkajs's KafkaConfig takes them as they are). */
export interface KafkaClientConnection {
  readonly clientId: string;
  readonly brokers: string[];
  readonly ssl?: KafkaTlsOptions & { readonly rejectUnauthorized: boolean };
  readonly sasl?: KafkaSaslOptions;
}

/** The Kafka client's connection settings for a (possibly secured) cluster. */
export function kafkaConnection(options: Pick<EventLogOptions, 'brokers' | 'clientId' | 'ssl' | 'sasl'>): KafkaClientConnection {
  const { ssl, sasl } = options;
  return {
    clientId: options.clientId,
    brokers: [...options.brokers],
    // rejectUnauthorized stays true: a broker whose certificate does not chain to the CA is refused.
    ...(ssl ? { ssl: { rejectUnauthorized: true, ...ssl } } : {}),
    ...(sasl ? { sasl: { mechanism: sasl.mechanism, username: sasl.username, password: sasl.password } } : {}),
  };
}
