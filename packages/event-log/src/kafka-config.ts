// The event log's settings: connection (platformatic-connection.ts maps them to the client's), the
// logger it reports to, and the append bounds.

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
