import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from './proc.ts';

// Certificates for a local TLS listener (the secured-cluster tests): a private CA made with openssl,
// a server certificate it signs for 127.0.0.1 and localhost (PEM, as Postgres reads it), and the
// same in the PKCS12 keystore Kafka reads.

export interface TestCertificates {
  /** PEM of the CA that signed the broker certificate: what KAFKA_SSL_CA_FILE names. */
  readonly caFile: string;
  /** PEM server certificate and its unencrypted key. */
  readonly certFile: string;
  readonly keyFile: string;
  readonly keystoreFile: string;
  readonly keystorePassword: string;
}

export async function makeServerCertificates(dir: string): Promise<TestCertificates> {
  mkdirSync(dir, { recursive: true });
  const f = (name: string) => join(dir, name);
  const password = randomBytes(12).toString('hex');
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('ca.key'), '-out', f('ca.pem'), '-days', '2', '-subj', '/CN=OCPI hub test CA']);
  await run('openssl', ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('broker.key'), '-out', f('broker.csr'), '-subj', '/CN=localhost']);
  writeFileSync(f('broker.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  await run('openssl', ['x509', '-req', '-in', f('broker.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f('broker.pem'), '-days', '2', '-extfile', f('broker.ext')]);
  await run('openssl', ['pkcs12', '-export', '-in', f('broker.pem'), '-inkey', f('broker.key'), '-certfile', f('ca.pem'), '-name', 'broker', '-out', f('broker.p12'), '-passout', `pass:${password}`]);
  return { caFile: f('ca.pem'), certFile: f('broker.pem'), keyFile: f('broker.key'), keystoreFile: f('broker.p12'), keystorePassword: password };
}
