import { Kafka, logLevel } from 'kafkajs';
import type { EventLogOptions, LogSink } from './kafka-config.ts';
import { kafkajsConnection } from './kafka-client-config.ts';

// A secured cluster that refuses the hub's credentials or presents a certificate the hub does not
// trust will refuse it on every retry: kafkajs would retry such a connection (TLS errors are
// connection errors to it) and the service would start into endless failures. One connection attempt
// at start, without retries, tells those apart from a broker that is merely not up yet.

export class KafkaAccessError extends Error {
  readonly kind: 'sasl' | 'tls';
  constructor(kind: 'sasl' | 'tls', message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KafkaAccessError';
    this.kind = kind;
  }
}

/** Node's codes for a certificate the client refuses (node:tls, OpenSSL verify results). */
const UNTRUSTED_CERT = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'CERT_UNTRUSTED', 'CERT_REJECTED',
  'ERR_TLS_CERT_ALTNAME_INVALID', 'CERT_SIGNATURE_FAILURE', 'INVALID_CA',
]);

function codeOf(e: unknown): string | undefined {
  for (let cur: unknown = e, depth = 0; cur && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/** The access failure an error stands for, or undefined for one that retrying may cure. */
export function kafkaAccessFailure(e: unknown, options: Pick<EventLogOptions, 'sasl' | 'brokers'>): KafkaAccessError | undefined {
  const err = e as { name?: string; message?: string } | undefined;
  const message = err?.message ?? String(e);
  if (err?.name === 'KafkaJSSASLAuthenticationError' || /SASL .*authentication failed|Authentication failed/i.test(message)) {
    const who = options.sasl ? `user "${options.sasl.username}", mechanism ${options.sasl.mechanism}` : 'no SASL configured';
    return new KafkaAccessError('sasl', `Kafka rejected the SASL credentials (${who}): check KAFKA_SASL_USERNAME, KAFKA_SASL_PASSWORD and KAFKA_SASL_MECHANISM. ${message}`, { cause: e });
  }
  const code = codeOf(e);
  if ((code && UNTRUSTED_CERT.has(code)) || /certificate|self[- ]signed/i.test(message)) {
    return new KafkaAccessError('tls', `Kafka's TLS certificate is not trusted at ${options.brokers.join(',')} (${code ?? 'verification failed'}): set KAFKA_SSL_CA_FILE to the CA that signed the brokers' certificates, or KAFKA_SSL_SERVERNAME to the name in them. ${message}`, { cause: e });
  }
  return undefined;
}

/**
 * Connects once, without retries, and throws KafkaAccessError when the cluster refuses the TLS
 * handshake or the SASL login. Any other failure (a broker not up yet) is left to the ordinary
 * retries of the event log and reported through `onUnreachable`.
 */
export async function verifyKafkaAccess(options: EventLogOptions, onUnreachable: (e: unknown) => void = () => undefined): Promise<void> {
  const kafka = new Kafka({ ...kafkajsConnection(options), logLevel: logLevel.NOTHING, retry: { retries: 0 }, connectionTimeout: 10_000 });
  const admin = kafka.admin();
  try {
    await admin.connect();
  } catch (e) {
    const failure = kafkaAccessFailure(e, options);
    if (failure) throw failure;
    onUnreachable(e);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/**
 * What a service, the stack and hubctl run before they use a secured cluster (TLS or SASL set): a
 * refused handshake or login stops them with KafkaAccessError; a broker not up yet only warns.
 * A plaintext cluster has nothing to refuse, so nothing is checked.
 */
export async function verifyKafkaAccessAtStart(options: EventLogOptions & { readonly logger: LogSink }): Promise<void> {
  if (!options.ssl && !options.sasl) return;
  await verifyKafkaAccess(options, (err) => options.logger.warn('Kafka not reachable at start; the client keeps retrying', { err: (err as Error).message }));
}
