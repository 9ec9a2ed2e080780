// Which connection failures at start are an access problem no retry cures (refused login, untrusted
// certificate) and which are left to the client's retries (a broker not up yet).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AuthenticationError, MultipleErrors, NetworkError } from '@platformatic/kafka';
import { kafkaAccessFailure } from '../src/index.ts';
import { platformaticConnection } from '../src/platformatic-connection.ts';

const brokers = ['kafka-1.example.com:9093'];
const sasl = { mechanism: 'scram-sha-512' as const, username: 'hub', password: 'p4ss' };

describe('kafkaAccessFailure', () => {
  it('a SASL authentication error names the user, the mechanism and the settings, never the password', () => {
    const e = new AuthenticationError('SASL authentication failed.');
    const failure = kafkaAccessFailure(e, { brokers, sasl });
    assert.equal(failure?.kind, 'sasl');
    assert.match(failure?.message ?? '', /^Kafka rejected the SASL credentials \(user "hub", mechanism scram-sha-512\): check KAFKA_SASL_USERNAME, KAFKA_SASL_PASSWORD/);
    assert.doesNotMatch(failure?.message ?? '', /p4ss/);
    assert.equal(failure?.cause, e);
  });

  it('a refused certificate (code on the error or on its cause) names KAFKA_SSL_CA_FILE', () => {
    for (const e of [
      new NetworkError('Connection to kafka-1.example.com:9093 failed.', { cause: Object.assign(new Error('self-signed certificate in certificate chain'), { code: 'SELF_SIGNED_CERT_IN_CHAIN' }) }),
      new Error('Connection error', { cause: Object.assign(new Error('x'), { code: 'ERR_TLS_CERT_ALTNAME_INVALID' }) }),
    ]) {
      const failure = kafkaAccessFailure(e, { brokers });
      assert.equal(failure?.kind, 'tls', e.message);
      assert.match(failure?.message ?? '', /Kafka's TLS certificate is not trusted at kafka-1\.example\.com:9093 .*KAFKA_SSL_CA_FILE/);
    }
  });

  it('finds the refusal inside @platformatic/kafka\'s gathered errors (one per broker tried)', () => {
    const login = new MultipleErrors('Cannot connect to any broker.', [new NetworkError('Connection to kafka-1.example.com:9093 failed.', { cause: new AuthenticationError('SASL authentication failed.') })]);
    assert.equal(kafkaAccessFailure(login, { brokers, sasl })?.kind, 'sasl');
    const certificate = new MultipleErrors('Cannot connect to any broker.', [new NetworkError('Connection to kafka-1.example.com:9093 failed.', { cause: Object.assign(new Error('x'), { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' }) })]);
    assert.equal(kafkaAccessFailure(certificate, { brokers })?.kind, 'tls');
    const down = new MultipleErrors('Cannot connect to any broker.', [new NetworkError('Connection to kafka-1.example.com:9093 failed.', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) })]);
    assert.equal(kafkaAccessFailure(down, { brokers, sasl }), undefined);
  });

  it('a broker that is not up yet is not an access failure', () => {
    const refused = new NetworkError('Connection to 127.0.0.1:9093 failed.', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9093'), { code: 'ECONNREFUSED' }) });
    assert.equal(kafkaAccessFailure(refused, { brokers, sasl }), undefined);
    assert.equal(kafkaAccessFailure(new NetworkError('Connection timeout.'), { brokers }), undefined);
  });
});

describe('platformaticConnection', () => {
  it('passes TLS (always verifying) and SASL to the client, and nothing for a plaintext cluster', () => {
    assert.deepEqual(platformaticConnection({ brokers, clientId: 'c' }), { clientId: 'c', bootstrapBrokers: brokers });
    assert.deepEqual(platformaticConnection({ brokers, clientId: 'c', ssl: { ca: 'CA', servername: 'kafka' }, sasl }), {
      clientId: 'c',
      bootstrapBrokers: brokers,
      tls: { rejectUnauthorized: true, ca: 'CA', servername: 'kafka' },
      sasl: { mechanism: 'SCRAM-SHA-512', username: 'hub', password: 'p4ss' },
    });
  });
});
