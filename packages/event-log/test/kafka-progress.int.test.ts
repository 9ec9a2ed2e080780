// A kafkajs consumer that holds its partitions but stopped fetching them (no error, no log line) is
// found by the subscription's progress checks and started again (src/progress-watch.ts), on the test
// stack's real broker. The stall is made by pausing the client's consumer behind the subscription's
// back: kafkajs then keeps the partitions and fetches nothing, as in the reported defect.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Kafka, logLevel, type Admin, type Consumer } from 'kafkajs';
import { kafkaSubscribe } from '../src/kafka-subscription.ts';

const brokers = process.env['TEST_KAFKA_BROKERS']?.split(',');

describe('a kafkajs subscription whose consumer stopped fetching', { skip: brokers ? false : 'needs the test stack (npm test)' }, () => {
  const topics: string[] = [];
  const kafka = new Kafka({ clientId: 'progress-test', brokers: brokers ?? [], logLevel: logLevel.NOTHING });
  let admin: Admin;

  before(async () => {
    admin = kafka.admin();
    await admin.connect();
  });

  after(async () => {
    await admin.deleteTopics({ topics }).catch(() => undefined);
    await admin.disconnect();
  });

  // A client whose connect fails at once: no broker listens on port 1.
  const unreachable = new Kafka({ clientId: 'progress-test-unreachable', brokers: ['127.0.0.1:1'], logLevel: logLevel.NOTHING, retry: { retries: 0 }, connectionTimeout: 500 });

  it('is started again once its partitions were behind and still for two checks, and applies what came meanwhile', async () => {
    await stallAndRecover(() => false, 2);
  });

  it('is tried again when the new consumer cannot connect, and recovers once one can', async () => {
    // The first replacement cannot reach a broker; the one after it can.
    await stallAndRecover((made) => made === 1, 3);
  });

  it('starts the new consumer even when the stalled one never reports its disconnect done', async () => {
    // The stalled consumer leaves the group, but its disconnect never resolves (a broker lost mid-request):
    // the restart waits for it only briefly.
    await stallAndRecover(() => false, 2, { disconnectNeverSettles: true });
  });

  async function stallAndRecover(failsToConnect: (made: number) => boolean, consumersMade: number, options: { disconnectNeverSettles?: boolean } = {}): Promise<void> {
    const topic = `progress-${randomUUID()}`;
    topics.push(topic);
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
    const producer = kafka.producer();
    await producer.connect();
    const send = (from: number, to: number) => producer.send({ topic, messages: Array.from({ length: to - from }, (_, i) => ({ key: `k${from + i}`, value: `v${from + i}` })) });
    const consumers: Consumer[] = [];
    const stored = new Map<number, bigint>();
    const applied: string[] = [];
    const warnings: string[] = [];
    const logger = { error() {}, info() {}, debug() {}, warn: (message: string) => void warnings.push(message) };
    const subscription = await kafkaSubscribe(
      {
        consumer: (group) => {
          const c = (failsToConnect(consumers.length) ? unreachable : kafka).consumer({ groupId: group, sessionTimeout: 10_000, heartbeatInterval: 1_000, maxWaitTimeInMs: 200 });
          consumers.push(c);
          return c;
        },
        admin: () => Promise.resolve(admin),
        physical: (t) => t,
        physicalGroup: (g) => g,
        logger,
        topicIds: () => Promise.resolve(new Map()),
        progressCheckMs: 500,
      },
      {
        group: `progress-${randomUUID()}`,
        topics: [topic],
        positions: { load: () => Promise.resolve(stored) },
        // As the projector does: the batch and its position stored together.
        onBatch: (batch) => {
          for (const r of batch.records) applied.push(r.value?.toString() ?? '');
          stored.set(batch.partition, BigInt(batch.lastOffset) + 1n);
          return Promise.resolve();
        },
      },
    );
    const appliedAll = async (n: number, what: string) => {
      for (let i = 0; i < 600 && applied.length < n; i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(applied.length, n, what);
    };
    try {
      await send(0, 6);
      await appliedAll(6, 'the first records applied');
      assert.equal(consumers.length, 1);
      // The client stops fetching every partition it holds, without a word to the subscription.
      const stalled = consumers[0];
      stalled?.pause([{ topic }]);
      if (stalled && options.disconnectNeverSettles) {
        const disconnect = stalled.disconnect.bind(stalled);
        stalled.disconnect = () => {
          void disconnect();
          return new Promise<void>(() => undefined);
        };
      }
      await new Promise((r) => setTimeout(r, 300));
      await send(6, 12);
      await appliedAll(12, 'what came while the consumer did not fetch is applied after its restart');
      assert.equal(consumers.length, consumersMade, 'a new consumer took over');
      assert.ok(
        warnings.some((w) => /were not fetched for two checks; the consumer is started again/.test(w)),
        'the restart is logged',
      );
      assert.deepEqual([...applied].sort(), Array.from({ length: 12 }, (_, i) => `v${i}`).sort(), 'each record once');
      if (consumersMade > 2) assert.ok(warnings.some((w) => /could not start the consumer again; retried/.test(w)), 'the failed start is logged');
    } finally {
      await subscription.stop();
      await producer.disconnect();
    }
  }
});
