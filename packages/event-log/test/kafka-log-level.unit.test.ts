// A healthy start prints no ERROR lines: Kafka's retriable protocol errors, which the client retries
// itself, are logged at debug; everything else keeps kafkajs's level (src/kafka-event-log.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { logLevel } from 'kafkajs';
import { kafkaLogLevel } from '../src/kafka-config.ts';

describe('kafkaLogLevel', () => {
  it('logs retriable coordinator and leader errors at debug', () => {
    for (const error of ['The group coordinator is not available', "The coordinator is loading and hence can't process requests for this group", 'There is no leader for this topic-partition as we are in the middle of a leadership election']) {
      assert.equal(kafkaLogLevel(logLevel.ERROR, 'Connection', { message: 'Response GroupCoordinator(key: 10, version: 2)', error }), 'debug', error);
    }
  });
  it("logs a consumer's restart after a retriable JoinGroup error at info: kafkajs rejoins by itself", () => {
    assert.equal(kafkaLogLevel(logLevel.ERROR, 'Consumer', { message: "Crash: KafkaJSProtocolError: The coordinator is loading and hence can't process requests for this group" }), 'info');
    assert.equal(kafkaLogLevel(logLevel.ERROR, 'Consumer', { message: 'Restarting the consumer in 200ms' }), 'info');
    assert.equal(kafkaLogLevel(logLevel.ERROR, 'Consumer', { message: 'Crash: KafkaJSProtocolError: The request included message batch larger than the configured segment size on the server' }), 'error');
  });
  it('keeps non-retriable errors, connection failures and other namespaces at their level', () => {
    assert.equal(kafkaLogLevel(logLevel.ERROR, 'Connection', { message: 'Response Produce(key: 0, version: 7)', error: 'The request included message batch larger than the configured segment size on the server' }), 'error');
    assert.equal(kafkaLogLevel(logLevel.ERROR, 'Connection', { message: 'Connection error: connect ECONNREFUSED 127.0.0.1:9092' }), 'error');
    assert.equal(kafkaLogLevel(logLevel.ERROR, 'Consumer', { message: 'Crash: KafkaJSNumberOfRetriesExceeded', error: 'The group coordinator is not available' }), 'error');
    assert.equal(kafkaLogLevel(logLevel.WARN, 'Runner', { message: 'anything' }), 'warn');
  });
});
