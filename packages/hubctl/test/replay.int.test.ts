// hubctl deliveries replay on real Kafka and Postgres: a topic whose old records retention removed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newEvent, sessionEventTypes, topics } from '@hub/events';
import { objectKey, pathSubject } from '@hub/modules';
import { postgresDeliveryStore, postgresQuarantineStore } from '@hub/store';
import { givenTestStack, whileRetriable } from '@hub/testing';
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
    const admin = stack.eventLog.topicAdmin();
    const offsets = await whileRetriable(() => admin.topicOffsets(physical));
    // What retention does: every record before the high watermark is deleted.
    await whileRetriable(() => admin.deleteRecords(physical, offsets.filter((o) => o.high !== '0').map((o) => ({ partition: o.partition, offset: o.high }))));
    await admin.close();

    const replay = replayToEmsp(
      { eventLog: stack.eventLog, deliveries: postgresDeliveryStore(stack.pool), quarantine: postgresQuarantineStore(stack.pool) },
      { kind: 'session', emsp: { countryCode: 'DE', partyId: 'EMS' }, fromOffset: 0n, ratePerSecond: 0, dryRun: true },
      () => undefined,
    );
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the replay waited for records that are gone')), 20_000).unref());
    assert.deepEqual(await Promise.race([replay, timeout]), { scanned: 0, matched: 0, enqueued: 0 });
  });

  it('replays a session with its PATCHes (they name no eMSP): merged once, pending again on a second replay, other eMSPs untouched', async () => {
    const { stack } = given;
    const deliveries = postgresDeliveryStore(stack.pool);
    const event = (id: string, type: string, data: Record<string, unknown>) => {
      const path = { countryCode: 'NL', partyId: 'CPO', id };
      return newEvent({ type, source: 'test', subject: pathSubject(path), key: objectKey(path), data });
    };
    const period = (start: string) => ({ start_date_time: start, dimensions: [{ type: 'ENERGY', volume: 1 }] });
    const full = (id: string, emsp: string) => ({ id, kwh: 0, cdr_token: { country_code: emsp.slice(0, 2), party_id: emsp.slice(3) }, charging_periods: [period('2026-01-01T10:00:00Z')], last_updated: '2026-01-01T10:00:00Z' });
    await stack.eventLog.append(topics.sessions, [
      event('R-MINE', sessionEventTypes.sessionPut, full('R-MINE', 'DE/EMS')),
      event('R-MINE', sessionEventTypes.sessionPatched, { kwh: 2, charging_periods: [period('2026-01-01T10:05:00Z')], last_updated: '2026-01-01T10:05:00Z' }),
      event('R-OTHER', sessionEventTypes.sessionPut, full('R-OTHER', 'FR/OTH')),
      event('R-OTHER', sessionEventTypes.sessionPatched, { kwh: 3, last_updated: '2026-01-01T10:05:00Z' }),
    ]);
    const replay = (emsp: { countryCode: string; partyId: string }) => replayToEmsp({ eventLog: stack.eventLog, deliveries, quarantine: postgresQuarantineStore(stack.pool) }, { kind: 'session', emsp, fromOffset: 0n, ratePerSecond: 0, dryRun: false }, () => undefined);
    const row = async (id: string) =>
      (await stack.pool.query<{ id: string; state: string; payload: Record<string, unknown>; source_offset: string }>("select id, state, payload, source_offset from deliveries where kind = 'session' and object_id = $1", [id])).rows;
    const deliverAll = async () => {
      for (const d of await deliveries.claimDue(100, new Map(), 100, 60_000)) await deliveries.delivered(d.id, d.offset);
    };

    await replay({ countryCode: 'FR', partyId: 'OTH' });
    await replay({ countryCode: 'DE', partyId: 'EMS' });
    const [mine] = await row('R-MINE');
    assert.deepEqual(mine?.payload, { ...full('R-MINE', 'DE/EMS'), kwh: 2, charging_periods: [period('2026-01-01T10:00:00Z'), period('2026-01-01T10:05:00Z')], last_updated: '2026-01-01T10:05:00Z' });
    assert.equal((await row('R-OTHER'))[0]?.payload['kwh'], 3);
    await deliverAll();

    // Replayed again: the row holding the PATCH's version is pending again as it is (its periods not
    // added twice); the other eMSP's session is not touched.
    await replay({ countryCode: 'DE', partyId: 'EMS' });
    const [again] = await row('R-MINE');
    assert.deepEqual([again?.state, again?.payload, again?.source_offset], ['pending', mine?.payload, mine?.source_offset]);
    assert.equal((await row('R-OTHER'))[0]?.state, 'delivered');
  });
});
