// The group commit's queue (src/group-commit.ts), against a producer slot that stands in for a client:
// an append that timed out while the producer was still connecting is never sent afterwards.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newEvent } from '@hub/events';
import { groupCommitAppender, type ProducerSlot, type TopicRecords } from '../src/group-commit.ts';

const event = (id: string) => newEvent({ type: 'test.v1', source: 'test', subject: id, key: id, data: { id } });

describe('groupCommitAppender', () => {
  it('does not send an append that timed out while the producer connected, and sends the next one', async () => {
    const sent: string[] = [];
    let connected: () => void = () => undefined;
    let slow = true;
    const slot: ProducerSlot = {
      connect: () =>
        new Promise((resolve) => {
          const send = async (records: TopicRecords) => void sent.push(...records.flatMap((t) => t.messages.map((m) => m.key ?? '')));
          if (!slow) return resolve(send);
          connected = () => resolve(send);
        }),
      discard: () => undefined,
      close: () => Promise.resolve(),
    };
    const appender = groupCommitAppender({ brokers: [], clientId: 'test', logger: { error() {}, warn() {}, info() {}, debug() {} }, appendTimeoutMs: 50 }, (t) => t, slot, (e) => e);
    await assert.rejects(appender.append('sessions', [event('refused')]), /within 50 ms/);
    slow = false;
    connected();
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(sent, [], 'the refused append is not sent once the producer is there');
    await appender.append('sessions', [event('later')]);
    assert.deepEqual(sent, ['later']);
  });
});
