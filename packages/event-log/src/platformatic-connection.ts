import type { EventLogOptions } from './kafka-config.ts';

// The connection settings of EventLogOptions in @platformatic/kafka's terms: brokers, client id, TLS
// and SASL.

export function platformaticConnection(options: Pick<EventLogOptions, 'brokers' | 'clientId' | 'ssl' | 'sasl'>) {
  const { ssl, sasl } = options;
  return {
    clientId: options.clientId,
    bootstrapBrokers: [...options.brokers],
    // rejectUnauthorized stays true: a broker whose certificate does not chain to the CA is refused.
    ...(ssl ? { tls: { rejectUnauthorized: true, ...ssl } } : {}),
    ...(sasl ? { sasl: { mechanism: ({ plain: 'PLAIN', 'scram-sha-256': 'SCRAM-SHA-256', 'scram-sha-512': 'SCRAM-SHA-512' } as const)[sasl.mechanism], username: sasl.username, password: sasl.password } } : {}),
  };
}

/**
 * The client's retries of a request that failed retriably (8 retries from 200 ms, doubling, at most
 * 5 s apart): a coordinator moving or loading on a fresh or failing-over cluster answers for seconds,
 * which 8 retries 200 ms apart outlast.
 */
export const PLATFORMATIC_RETRY = {
  retries: 8,
  retryDelay: (_client: unknown, _operation: string, attempt: number): number => Math.min(200 * 2 ** Math.max(0, attempt - 1), 5_000),
} as const;
