import { readFileSync } from 'node:fs';
import type { ConfigReader } from './index.ts';

// How a service reaches a secured Kafka cluster (managed offerings and Strimzi require TLS and SASL):
// TLS with the cluster's CA, an optional client certificate and a server name; SASL PLAIN or SCRAM.
// The files are read here, so an unreadable one is a configuration problem named by its variable.

export interface KafkaTls {
  /** PEM CA bundle the broker certificates must chain to; absent: the system's trusted CAs. */
  readonly ca?: string;
  /** PEM client certificate and key (mutual TLS). */
  readonly cert?: string;
  readonly key?: string;
  /** TLS server name to send and verify, when the broker addresses are not the certificate's names. */
  readonly servername?: string;
}

export type KafkaSaslMechanism = 'plain' | 'scram-sha-256' | 'scram-sha-512';
export const KAFKA_SASL_MECHANISMS: readonly KafkaSaslMechanism[] = ['plain', 'scram-sha-256', 'scram-sha-512'];

export interface KafkaSasl {
  readonly mechanism: KafkaSaslMechanism;
  readonly username: string;
  /** Never logged. */
  readonly password: string;
}

export interface KafkaSecurity {
  readonly ssl?: KafkaTls;
  readonly sasl?: KafkaSasl;
}

export type FileReader = (path: string) => string;

const readUtf8: FileReader = (path) => readFileSync(path, 'utf8');

export function readKafkaSecurity(r: ConfigReader, readFile: FileReader = readUtf8): KafkaSecurity {
  const file = (name: string): string | undefined => {
    const path = r.optionalString(name);
    if (path === undefined) return undefined;
    try {
      return readFile(path);
    } catch (e) {
      r.problem(`${name}: cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
      return undefined;
    }
  };
  const tlsNames = ['KAFKA_SSL_CA_FILE', 'KAFKA_SSL_CERT_FILE', 'KAFKA_SSL_KEY_FILE', 'KAFKA_SSL_SERVERNAME'];
  const tlsGiven = tlsNames.filter((n) => r.optionalString(n) !== undefined);
  const sslOn = r.bool('KAFKA_SSL', tlsGiven.length > 0);
  if (!sslOn && tlsGiven.length > 0) r.problem(`KAFKA_SSL is false but ${tlsGiven.join(', ')} ${tlsGiven.length === 1 ? 'is' : 'are'} set`);
  let ssl: KafkaTls | undefined;
  if (sslOn) {
    const ca = file('KAFKA_SSL_CA_FILE');
    const cert = file('KAFKA_SSL_CERT_FILE');
    const key = file('KAFKA_SSL_KEY_FILE');
    const servername = r.optionalString('KAFKA_SSL_SERVERNAME');
    if ((r.optionalString('KAFKA_SSL_CERT_FILE') === undefined) !== (r.optionalString('KAFKA_SSL_KEY_FILE') === undefined)) {
      r.problem('KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE go together (a client certificate needs its key)');
    }
    ssl = { ...(ca !== undefined ? { ca } : {}), ...(cert !== undefined ? { cert } : {}), ...(key !== undefined ? { key } : {}), ...(servername ? { servername } : {}) };
  }
  const mechanism = r.optionalString('KAFKA_SASL_MECHANISM')?.toLowerCase();
  const username = r.optionalString('KAFKA_SASL_USERNAME');
  const password = r.optionalString('KAFKA_SASL_PASSWORD');
  let sasl: KafkaSasl | undefined;
  if (mechanism === undefined) {
    if (username !== undefined || password !== undefined) r.problem('KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD need KAFKA_SASL_MECHANISM (plain, scram-sha-256 or scram-sha-512)');
  } else if (!(KAFKA_SASL_MECHANISMS as readonly string[]).includes(mechanism)) {
    r.problem(`KAFKA_SASL_MECHANISM must be one of ${KAFKA_SASL_MECHANISMS.join(', ')}, got "${mechanism}"`);
  } else if (username === undefined || password === undefined) {
    r.problem(`KAFKA_SASL_MECHANISM ${mechanism} needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD`);
  } else {
    sasl = { mechanism: mechanism as KafkaSaslMechanism, username, password };
  }
  return { ...(ssl ? { ssl } : {}), ...(sasl ? { sasl } : {}) };
}
