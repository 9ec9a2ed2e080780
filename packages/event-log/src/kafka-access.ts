import type { EventLogOptions, LogSink } from './kafka-config.ts';

// A secured cluster that refuses the hub's credentials or presents a certificate the hub does not
// trust will refuse it on every retry: the client would retry such a connection (a TLS error is a
// network error to it) and the service would start into endless failures. One connection attempt
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

/**
 * The errors an error stands for: itself, its causes, and the errors it gathers (@platformatic/kafka's
 * MultipleErrors holds each attempt's); bounded, as a cycle would otherwise never end.
 */
function errorTree(e: unknown): Array<{ name?: unknown; message?: unknown; code?: unknown }> {
  const found: Array<{ name?: unknown; message?: unknown; code?: unknown }> = [];
  const visit = (cur: unknown, depth: number) => {
    if (!cur || typeof cur !== 'object' || depth > 5 || found.length >= 50 || found.includes(cur)) return;
    found.push(cur);
    visit((cur as { cause?: unknown }).cause, depth + 1);
    const gathered = (cur as { errors?: unknown }).errors;
    if (Array.isArray(gathered)) for (const inner of gathered) visit(inner, depth + 1);
  };
  visit(e, 0);
  return found;
}

/** The access failure an error stands for, or undefined for one that retrying may cure. */
export function kafkaAccessFailure(e: unknown, options: Pick<EventLogOptions, 'sasl' | 'brokers'>): KafkaAccessError | undefined {
  const message = (e as { message?: string } | undefined)?.message ?? String(e);
  const tree = errorTree(e);
  const texts = tree.map((t) => (typeof t.message === 'string' ? t.message : '')).concat(message);
  // @platformatic/kafka codes its AuthenticationError PLT_KFK_AUTHENTICATION.
  if (tree.some((t) => t.code === 'PLT_KFK_AUTHENTICATION') || texts.some((m) => /SASL .*authentication failed|Authentication failed/i.test(m))) {
    const who = options.sasl ? `user "${options.sasl.username}", mechanism ${options.sasl.mechanism}` : 'no SASL configured';
    return new KafkaAccessError('sasl', `Kafka rejected the SASL credentials (${who}): check KAFKA_SASL_USERNAME, KAFKA_SASL_PASSWORD and KAFKA_SASL_MECHANISM. ${message}`, { cause: e });
  }
  const code = tree.map((t) => t.code).find((c): c is string => typeof c === 'string' && UNTRUSTED_CERT.has(c));
  if (code || texts.some((m) => /certificate|self[- ]signed/i.test(m))) {
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
  // Imported on first use, as createEventLog does: loading the client costs about half a second of CPU.
  const { platformaticAccessAttempt } = await import('./platformatic-access.ts');
  const refused = await platformaticAccessAttempt(options);
  if (refused === undefined) return;
  const failure = kafkaAccessFailure(refused, options);
  if (failure) throw failure;
  onUnreachable(refused);
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
