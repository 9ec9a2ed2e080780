// The @platformatic/kafka adapter's pure parts: the key partitioning, which must stay the one the
// topics were written with (src/platformatic-appender.ts), its failure translation (src/platformatic-failure.ts) and how a
// fetch response becomes a partition's batch (src/platformatic-fetch.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createHash } from 'node:crypto';
import { NetworkError, ResponseError, UserError, type Consumer } from '@platformatic/kafka';
import { DependencyUnavailable } from '@hub/core';
import { partitionOfKey } from '../src/platformatic-appender.ts';
import { platformaticFailureKind, platformaticRequestFailure, translatePlatformaticError } from '../src/platformatic-failure.ts';
import { fetchPositions } from '../src/platformatic-fetch.ts';
import { KafkaRequestFailed } from '../src/kafka-failure.ts';
import { createEventLog } from '../src/index.ts';

describe('partitionOfKey', () => {
  // Kafka's Java client's partition (murmur2, sign bit cleared), which kafkajs's DefaultPartitioner also
  // gave when it wrote the topics of earlier hub releases: an object's later events must land in the
  // partition of its earlier ones. The digest is of the partitions kafkajs 2.2.4 gave these 2,000 keys.
  it('puts every key in the partition Kafka\'s Java client (and kafkajs before) puts it in', () => {
    const partitionsGiven: number[] = [];
    for (const partitions of [1, 3, 6, 12]) {
      for (let i = 0; i < 500; i++) partitionsGiven.push(partitionOfKey(`NL/CPO/LOC${i}/${'é'.repeat(i % 3)}${i * 7919}`, partitions));
    }
    assert.equal(createHash('sha256').update(partitionsGiven.join(',')).digest('hex'), '1904634b982fe377dac68f30b34e89e1e881db6231871e8d38f8c577de02d2e5');
    const samples: Array<[string, number]> = [['NL/CPO/LOC0/0', 5], ['NL/CPO/LOC1/é7919', 9], ['NL/CPO/LOC2/éé15838', 5], ['NL/CPO/LOC3/23757', 4], ['NL/CPO/LOC4/é31676', 9], ['NL/CPO/LOC5/éé39595', 0]];
    for (const [key, partition] of samples) assert.equal(partitionOfKey(key, 12), partition, key);
  });
});

describe('platformaticFailureKind', () => {
  it('sees the client\'s errors about the cluster as dependency failures, its refused calls as unknown', () => {
    assert.equal(platformaticFailureKind(new NetworkError('Connection closed')), 'dependency');
    assert.equal(platformaticFailureKind(new UserError('/options/topics must be an array')), 'unknown');
    assert.equal(platformaticFailureKind(new TypeError('nope')), 'unknown');
  });
  it('translates them into DependencyUnavailable, others unchanged', () => {
    const t = translatePlatformaticError(new NetworkError('Connection closed'));
    assert.ok(t instanceof DependencyUnavailable);
    assert.equal(t.dependency, 'kafka');
    const other = new RangeError('x');
    assert.equal(translatePlatformaticError(other), other);
  });
  it('keeps the broker\'s error name and whether asking again may succeed', () => {
    // CreateTopics (api key 19) answered TOPIC_ALREADY_EXISTS (36): not retriable.
    const exists = platformaticRequestFailure(new ResponseError(19, 7, { '/topics/0': [36, 'Topic exists'] }, {}));
    assert.ok(exists instanceof KafkaRequestFailed);
    assert.equal(exists.code, 'TOPIC_ALREADY_EXISTS');
    assert.equal(exists.retriable, false);
    // NOT_LEADER_OR_FOLLOWER (6): retriable.
    const moved = platformaticRequestFailure(new ResponseError(2, 8, { '/topics/0/partitions/0': [6, null] }, {}));
    assert.ok(moved instanceof KafkaRequestFailed);
    assert.equal(moved.retriable, true);
  });
});

/** A Consumer answering one fetch response: what fetchPositions asks of it. */
function fakeConsumer(response: unknown): Consumer {
  const tracked: string[] = [];
  const metadata = { topics: new Map([['t', { id: 'id-t', partitionsCount: 2, partitions: [{ leader: 1 }, { leader: 1 }] }]]) };
  return { topics: { current: tracked, track: (t: string) => tracked.push(t) }, metadata: async () => metadata, fetch: async () => response } as unknown as Consumer;
}

const record = (offsetDelta: number, value: string) => ({ offsetDelta, timestampDelta: BigInt(offsetDelta), key: Buffer.from('k'), value: Buffer.from(value), headers: [[Buffer.from('h'), Buffer.from('v')]] });

describe('fetchPositions', () => {
  it('gives the records from the offset asked, skips control batches and moves past the last batch', async () => {
    const batches = [
      { firstOffset: 10n, lastOffsetDelta: 2, attributes: 0, firstTimestamp: 1_000n, records: [record(0, 'a'), record(1, 'b'), record(2, 'c')] },
      // A control batch (transaction marker), then a batch whose last records were compacted away.
      { firstOffset: 13n, lastOffsetDelta: 0, attributes: 1 << 5, firstTimestamp: 1_000n, records: [record(0, 'marker')] },
      { firstOffset: 14n, lastOffsetDelta: 3, attributes: 0, firstTimestamp: 2_000n, records: [record(0, 'd')] },
    ];
    const response = { responses: [{ topicId: 'id-t', partitions: [
      { partitionIndex: 0, highWatermark: 30n, records: batches },
      // In the fetch session, not asked this time: left out.
      { partitionIndex: 1, highWatermark: 5n, records: [{ firstOffset: 0n, lastOffsetDelta: 0, attributes: 0, firstTimestamp: 0n, records: [record(0, 'x')] }] },
    ] }] };
    const [fetched, ...rest] = await fetchPositions(fakeConsumer(response), [{ topic: 't', partition: 0, offset: 11n }], { maxBytes: 1, maxBytesPerPartition: 1, maxWaitMs: 1 });
    assert.equal(rest.length, 0);
    assert.ok(fetched);
    assert.deepEqual(fetched.records.map((r) => [r.offset, r.value?.toString(), r.timestamp]), [['11', 'b', 1_001], ['12', 'c', 1_002], ['14', 'd', 2_000]]);
    assert.equal(fetched.next, 18n);
    assert.equal(fetched.highWatermark, 30n);
    assert.equal(fetched.records[0]?.headers['h']?.toString(), 'v');
  });
  it('stays at the offset asked when nothing came', async () => {
    const response = { responses: [{ topicId: 'id-t', partitions: [{ partitionIndex: 0, highWatermark: 11n, records: null }] }] };
    const [fetched] = await fetchPositions(fakeConsumer(response), [{ topic: 't', partition: 0, offset: 11n }], { maxBytes: 1, maxBytesPerPartition: 1, maxWaitMs: 1 });
    assert.equal(fetched?.next, 11n);
    assert.deepEqual(fetched?.records, []);
  });
});

describe('createEventLog', () => {
  it('makes an event log without connecting, and closes it', async () => {
    const logger = { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined };
    const log = await createEventLog({ brokers: ['127.0.0.1:1'], clientId: 'unit', topicPrefix: 'p', logger });
    assert.equal(log.physical('ocpi.sessions.v1'), 'p.ocpi.sessions.v1');
    await log.close();
  });
});
