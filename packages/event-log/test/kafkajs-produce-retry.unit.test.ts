// kafkajs is patched (patches/kafkajs@2.2.4.patch) where a produce request is retried: upstream kept
// each broker's answer per broker object, so when one broker's request failed and a metadata refresh
// moved its partitions to a broker that had answered, a retry either resent that broker's written
// partitions under new sequence numbers (its object replaced: records written twice) or skipped the
// moved partitions (answered as written, never written). The patch keeps the answers per partition.
// Logic without I/O: kafkajs's sendMessages with a cluster of two brokers stood in for by objects.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';

const require = createRequire(import.meta.url);

type Message = { key: string; value: string };
type TopicData = Array<{ topic: string; partitions: Array<{ partition: number; firstSequence: number; messages: Message[] }> }>;
type Broker = { nodeId: number; produce(request: { topicData: TopicData }): Promise<unknown> };
type SendMessages = (deps: Record<string, unknown>) => (request: { acks: number; timeout: number; topicMessages: Array<{ topic: string; messages: Message[] }> }) => Promise<Array<{ topicName: string; partition: number }>>;
const sendMessages = require('kafkajs/src/producer/sendMessages.js') as SendMessages;

/** What the brokers wrote: "partition:sequence:value" per record. */
function scenario(options: { replaceAnsweringBroker: boolean }) {
  const written: string[] = [];
  let failNode2 = true;
  // Partition 0 is led by broker 1, partition 1 by broker 2 until broker 2 is lost.
  const leaders: Record<number, number> = { 0: 1, 1: 2 };
  const broker = (nodeId: number): Broker => ({
    nodeId,
    async produce({ topicData }) {
      if (nodeId === 2 && failNode2) {
        failNode2 = false;
        throw Object.assign(new Error('Connection error: connect ECONNREFUSED'), { name: 'KafkaJSConnectionError', retriable: true });
      }
      for (const t of topicData) for (const p of t.partitions) p.messages.forEach((m, i) => written.push(`${p.partition}:${p.firstSequence + i}:${m.value}`));
      return { topics: topicData.map((t) => ({ topicName: t.topic, partitions: t.partitions.map((p) => ({ partition: p.partition, errorCode: 0, baseOffset: '0' })) })) };
    },
  });
  const brokers: Record<number, Broker> = { 1: broker(1), 2: broker(2) };
  const sequences = new Map<number, number>();
  const cluster = {
    targetTopics: new Set<string>(),
    async refreshMetadataIfNecessary() {},
    async addMultipleTargetTopics() {},
    isConnected: () => true,
    removeBroker() {},
    // The refresh after broker 2's failure: partition 1 moves to broker 1, whose object kafkajs may
    // build anew (brokerPool.refreshMetadata: the seed broker's object, or a changed address).
    async refreshMetadata() {
      leaders[1] = 1;
      if (options.replaceAnsweringBroker) brokers[1] = broker(1);
    },
    findTopicPartitionMetadata: () => [0, 1].map((partitionId) => ({ partitionId, leader: leaders[partitionId] })),
    findLeaderForPartitions: (_topic: string, partitions: string[]) =>
      partitions.reduce<Record<number, number[]>>((byLeader, p) => {
        const leader = leaders[Number(p)] as number;
        return { ...byLeader, [leader]: [...(byLeader[leader] ?? []), Number(p)] };
      }, {}),
    findBroker: async ({ nodeId }: { nodeId: string }) => brokers[Number(nodeId)],
  };
  const eosManager = {
    isTransactional: () => false,
    acquireBrokerLock: async () => undefined,
    releaseBrokerLock: async () => undefined,
    getProducerId: () => 7,
    getProducerEpoch: () => 0,
    getSequence: (_topic: string, partition: number) => sequences.get(partition) ?? 0,
    updateSequence: (_topic: string, partition: number, increment: number) => sequences.set(partition, (sequences.get(partition) ?? 0) + increment),
  };
  const retrier = async (attempt: (bail: (e: unknown) => void, retryCount: number, retryTime: number) => Promise<unknown>) => {
    let bailed: Error | undefined;
    for (let retry = 0; retry < 5; retry++) {
      try {
        return await attempt((e) => (bailed = e instanceof Error ? e : new Error(String(e))), retry, 0);
      } catch (e) {
        if (bailed !== undefined) throw bailed;
        if (retry === 4) throw e;
      }
    }
  };
  const logger = { debug() {}, error() {}, warn() {}, info() {} };
  const send = sendMessages({ logger, cluster, partitioner: ({ message }: { message: Message }) => Number(message.key), eosManager, retrier });
  return { written, send };
}

const topicMessages = [{ topic: 'ocpi.sessions.v1', messages: [{ key: '0', value: 'a' }, { key: '1', value: 'b' }, { key: '0', value: 'c' }] }];

describe('kafkajs produce retry (patched)', () => {
  for (const replaceAnsweringBroker of [true, false]) {
    it(`writes each record once when a broker is lost and its partitions move to one that answered (${replaceAnsweringBroker ? 'its object rebuilt' : 'the same object'})`, async () => {
      const { written, send } = scenario({ replaceAnsweringBroker });
      const answers = await send({ acks: -1, timeout: 30_000, topicMessages });
      assert.deepEqual(written.sort(), ['0:0:a', '0:1:c', '1:0:b']);
      assert.deepEqual(answers.map((a) => `${a.topicName}:${a.partition}`).sort(), ['ocpi.sessions.v1:0', 'ocpi.sessions.v1:1']);
    });
  }
});
