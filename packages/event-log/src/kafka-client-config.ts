import type { KafkaConfig, SASLOptions } from 'kafkajs';
import { kafkaConnection, type EventLogOptions, type KafkaSaslOptions } from './kafka-config.ts';

// kafkaConnection (kafka-config.ts) in kafkajs's types, for the adapter's own clients only (not
// exported from the package: no kafkajs type leaves it).

function saslOptions(s: KafkaSaslOptions): SASLOptions {
  const login = { username: s.username, password: s.password };
  // kafkajs types SASL as one object per mechanism.
  switch (s.mechanism) {
    case 'plain': return { mechanism: 'plain', ...login };
    case 'scram-sha-256': return { mechanism: 'scram-sha-256', ...login };
    case 'scram-sha-512': return { mechanism: 'scram-sha-512', ...login };
  }
}

export function kafkajsConnection(options: Pick<EventLogOptions, 'brokers' | 'clientId' | 'ssl' | 'sasl'>): Pick<KafkaConfig, 'clientId' | 'brokers' | 'ssl' | 'sasl'> {
  const { sasl, ...rest } = kafkaConnection(options);
  return { ...rest, ...(sasl ? { sasl: saslOptions(sasl) } : {}) };
}
