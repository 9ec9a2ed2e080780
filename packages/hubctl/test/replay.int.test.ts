// hubctl deliveries replay on real Kafka and Postgres: a topic whose old records retention removed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newEvent, topics } from '@hub/events';
import { objectKey, pathSubject, sessionEventTypes } from '@hub/read-models';
import { postgresDeliveryStore, postgresQuarantineStore } from '@hub/store';
import { givenTestStack } from '@hub/testing';
import { replayToEmsp } from '../src/replay.ts';

describe('replay of a topic to one eMSP', () => {
  const given = givenTestStack('replay');

  it('finishes when retention removed the records from the requested offset on (it starts at each partition’s log start)', async () => {
    const { stack } = given;
    const events = Array.from({ length: 6 }, (_, i) => {
      const path = { countryCode: 'NL', partyId: 'CPO', id: `GONE-${i}` };
      return newEvent({ type: sessionEventTypes.sessionPut, source: 'test', subject: pathSubject(path), key: objectKey(path), data: { id: path.id, cdr_token: { country_code: 'DE', party_id: 'EMS' } } });
    });
    await stack.eventLog.append(topics.sessions, events);
    const physical = stack.eventLog.physical(topics.sessions);
    const admin = stack.eventLog.admin();
    await admin.connect();
    const offsets = await admin.fetchTopicOffsets(physical);
    // What retention does: every record before the high watermark is deleted.
    await admin.deleteTopicRecords({ topic: physical, partitions: offsets.filter((o) => o.high !== '0').map((o) => ({ partition: o.partition, offset: o.high })) });
    await admin.disconnect();

    const replay = replayToEmsp(
      { eventLog: stack.eventLog, deliveries: postgresDeliveryStore(stack.pool), quarantine: postgresQuarantineStore(stack.pool) },
      { kind: 'session', emsp: { countryCode: 'DE', partyId: 'EMS' }, fromOffset: 0n, ratePerSecond: 0, dryRun: true },
      () => undefined,
    );
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the replay waited for records that are gone')), 20_000).unref());
    assert.deepEqual(await Promise.race([replay, timeout]), { scanned: 0, matched: 0, enqueued: 0 });
  });
});
