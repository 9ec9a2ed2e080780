// The search for CDRs before one is appended again (kafka-lookup.ts, docs/decisions/0003-each-cdr-once.md)
// decides "absent" only after reading the whole range of the partition. The consumer is the client's;
// what is tested here is what the search makes of the batches it is handed, so the client is stood in
// for by one that hands over the batches a real one may hand over.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Admin, Consumer, EachBatchPayload } from 'kafkajs';
import { findEventsInTopic } from '../src/kafka-lookup.ts';

const topic = 'ocpi.cdrs.v1';
const WANTED = 'ce-wanted';

interface FakeBatch {
  fetchedOffset: string;
  offsets: number[];
}

function batchOf(b: FakeBatch) {
  const messages = b.offsets.map((o) => ({ offset: String(o), headers: { ce_id: o === 42 ? WANTED : `other-${o}` } }));
  return {
    topic,
    partition: 0,
    fetchedOffset: b.fetchedOffset,
    highWatermark: '120',
    messages,
    firstOffset: () => messages[0]?.offset ?? null,
    lastOffset: () => messages.at(-1)?.offset ?? '119',
  };
}

/** One partition holding offsets 0..119; the search starts at 10 and ends at 100 (its high watermark then). */
function fakeKafka(script: (seeks: number[]) => FakeBatch[]) {
  const seeks: number[] = [];
  const admin = {
    fetchTopicOffsets: async () => [{ partition: 0, offset: '100', high: '100', low: '0' }],
    fetchTopicOffsetsByTimestamp: async () => [{ partition: 0, offset: '10' }],
  } as unknown as Admin;
  const consumer = {
    connect: async () => undefined,
    subscribe: async () => undefined,
    disconnect: async () => undefined,
    seek: ({ offset }: { offset: string }) => void seeks.push(Number(offset)),
    run: async ({ eachBatch }: { eachBatch: (p: EachBatchPayload) => Promise<void> }) => {
      // Batches arrive after run() resolved and the search seeked, as from a real fetch loop.
      setImmediate(() => {
        void (async () => {
          for (const b of script(seeks)) await eachBatch({ batch: batchOf(b) } as unknown as EachBatchPayload);
        })();
      });
    },
  } as unknown as Consumer;
  return { seeks, deps: { admin: async () => admin, consumer: () => consumer } };
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
const wanted = [{ key: 'NL/CPO/CDR-1', id: WANTED, since: new Date() }];

describe('the search of a partition for events', () => {
  it('finds an event in the range it was seeked to', async () => {
    const { deps, seeks } = fakeKafka(() => [{ fetchedOffset: '10', offsets: range(10, 60) }, { fetchedOffset: '60', offsets: range(60, 110) }]);
    const found = await findEventsInTopic(deps, topic, wanted, 2_000);
    assert.deepEqual([...found], [WANTED]);
    assert.deepEqual(seeks, [10]);
  });

  it('does not take a batch fetched from past the range (the consumer rejoined its group and restarted at the end) for the end of the search', async () => {
    // After a rejoin a group without committed offsets starts at the end: the first batch the search
    // sees begins at 100, past the whole range. The search goes back to where it was and reads on.
    const { deps, seeks } = fakeKafka(() => [
      { fetchedOffset: '10', offsets: range(10, 30) },
      { fetchedOffset: '100', offsets: range(100, 110) },
      { fetchedOffset: '30', offsets: range(30, 100) },
    ]);
    const found = await findEventsInTopic(deps, topic, wanted, 2_000);
    assert.deepEqual([...found], [WANTED], 'the event at offset 42 is found');
    assert.deepEqual(seeks, [10, 30], 'seeked back to the first offset not searched');
  });

  it('fails (retry later) rather than answer "absent" when the range is never read', async () => {
    const { deps } = fakeKafka(() => [{ fetchedOffset: '100', offsets: range(100, 110) }]);
    await assert.rejects(findEventsInTopic(deps, topic, wanted, 500), /did not serve/);
  });
});
