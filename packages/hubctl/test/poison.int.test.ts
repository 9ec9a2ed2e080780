// hubctl's consumers on real Kafka and Postgres: a rebuild and a replay meet a
// record Postgres cannot store; each quarantines it (under the live consumer's group, which re-drives
// it) and applies the records after it, instead of failing the rebuild or looping the replay.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { locationEventTypes, newEvent, sessionEventTypes, topics } from '@hub/events';
import { postgresDeliveryStore, postgresQuarantineStore, postgresReadModelStore } from '@hub/store';
import { givenTestStack } from '@hub/testing';
import { rebuildReadModel } from '../src/rebuild.ts';
import { replayToEmsp } from '../src/replay.ts';

/** One Kafka key for the poison record and the valid one after it: the same partition. */
const KEY = 'NL/CPO/SHARED';
const within = <T>(what: string, p: Promise<T>) =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} did not finish`)), 30_000).unref())]);

/**
 * Right after a test stack creates its topics, some partitions may not have a leader yet and
 * ListOffsets answers NOT_LEADER (latestOffsets does not retry it): wait until it answers.
 */
async function leadersElected(eventLog: { latestOffsets(topic: string): Promise<unknown> }, topic: string): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      await eventLog.latestOffsets(topic);
      return;
    } catch (e) {
      if (i > 50) throw e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

describe('hubctl consumers and poison records', () => {
  const given = givenTestStack('hubctl_poison');

  it('a rebuild quarantines a location Postgres cannot store (year 0) and builds the rest', async () => {
    const { stack } = given;
    const location = (id: string, lastUpdated: string) =>
      newEvent({ type: locationEventTypes.locationPut, source: 'test', subject: `NL/CPO/${id}`, key: KEY, data: { country_code: 'NL', party_id: 'CPO', id, last_updated: lastUpdated } });
    await leadersElected(stack.eventLog, topics.locations);
    await stack.eventLog.append(topics.locations, [location('BAD', '0000-01-01T00:00:00Z'), location('GOOD', '2026-01-01T00:00:00Z')]);
    const store = postgresReadModelStore(stack.pool);
    const result = await within('the rebuild', rebuildReadModel({ eventLog: stack.eventLog, store }, 'locations', () => undefined));
    assert.equal(result.rows, 1);
    assert.equal(result.events, 2n);
    const [q, ...more] = await postgresQuarantineStore(stack.pool).list();
    assert.equal(more.length, 0);
    assert.equal(q?.consumerGroup, 'projector');
    assert.match(q?.reason ?? '', /22008/);
  });

  it('a replay quarantines a session Postgres cannot store (NUL) and enqueues the rest', async () => {
    const { stack } = given;
    const session = (id: string, extra: Record<string, unknown>) =>
      newEvent({ type: sessionEventTypes.sessionPut, source: 'test', subject: `NL/CPO/${id}`, key: KEY, data: { id, cdr_token: { country_code: 'DE', party_id: 'EMS' }, last_updated: '2026-01-01T00:00:00Z', ...extra } });
    await leadersElected(stack.eventLog, topics.sessions);
    await stack.eventLog.append(topics.sessions, [session('S-BAD', { meter_id: 'M\u0000' }), session('S-GOOD', {})]);
    const quarantine = postgresQuarantineStore(stack.pool);
    const result = await within(
      'the replay',
      replayToEmsp({ eventLog: stack.eventLog, deliveries: postgresDeliveryStore(stack.pool), quarantine }, { kind: 'session', emsp: { countryCode: 'DE', partyId: 'EMS' }, fromOffset: 0n, ratePerSecond: 0, dryRun: false }, () => undefined),
    );
    assert.deepEqual(result, { scanned: 2, matched: 2, enqueued: 1 });
    const rows = await quarantine.list({ consumerGroup: 'dispatcher' });
    assert.equal(rows.length, 1);
    assert.match(rows[0]?.reason ?? '', /22P05/);
    const objects = await stack.pool.query<{ object_id: string }>('select object_id from deliveries');
    assert.deepEqual(objects.rows.map((r) => r.object_id), ['S-GOOD']);
  });
});
