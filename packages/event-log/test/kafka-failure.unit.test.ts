// Kafka client failures are always the cluster's, never a record's: src/kafka-failure.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DependencyUnavailable } from '@hub/core';
import { AppendTimeoutError, kafkaFailureKind, translateKafkaError } from '../src/index.ts';

describe('kafkaFailureKind', () => {
  it('sees kafkajs errors and append timeouts as dependency failures', () => {
    const connection = Object.assign(new Error('Connection error: connect ECONNREFUSED'), { name: 'KafkaJSConnectionError' });
    assert.equal(kafkaFailureKind(connection), 'dependency');
    assert.equal(kafkaFailureKind(new AppendTimeoutError('ocpi.sessions.v1', 10)), 'dependency');
    assert.equal(kafkaFailureKind(new TypeError('nope')), 'unknown');
  });
  it('translates them into DependencyUnavailable', () => {
    const t = translateKafkaError(Object.assign(new Error('leader moved'), { name: 'KafkaJSProtocolError' }));
    assert.ok(t instanceof DependencyUnavailable);
    assert.equal(t.dependency, 'kafka');
    const other = new RangeError('x');
    assert.equal(translateKafkaError(other), other);
  });
});
