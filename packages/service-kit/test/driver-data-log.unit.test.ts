// The seam between events and drivers' data keys (driver-data-log.ts): a record whose sealed header
// its key does not open is handed over as not an event (the consumer quarantines it), never thrown
// for ever; a key that cannot be read throws (the partition waits). The event log and the key table
// are fakes: what is tested is the seam's logic.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { ConsumedRecord, EventLog, RecordBatch } from '@hub/core';
import { newEvent, recordValue, recordValueLength, topics, type HubEvent } from '@hub/events';
import { driverDataEventLog } from '../src/driver-data-log.ts';

const KEY_ID = '7f7c3f0e-2b1a-4c8e-9d2f-0a1b2c3d4e5f';
const cdr = { country_code: 'NL', party_id: 'CPO', id: 'CDR-1', cdr_token: { country_code: 'DE', party_id: 'EMS', uid: KEY_ID, type: 'RFID', contract_id: KEY_ID }, total_energy: 3 };

function consumed(sealedDriverData: string): ConsumedRecord {
  const event: HubEvent = { id: 'e1', type: 'ocpi.cdrs.cdr-posted.v1', source: 'test', subject: 'NL/CPO/CDR-1', time: new Date().toISOString(), key: 'NL/CPO/CDR-1', data: cdr, sealedDriverData };
  return { topic: topics.cdrs, partition: 0, offset: '0', key: Buffer.from('NL/CPO/CDR-1'), value: Buffer.from(JSON.stringify(cdr)), headers: {}, event };
}

/** What the wrapped subscription hands its handler for one record, or the error it throws. */
async function handed(record: ConsumedRecord, keyById: () => Promise<Buffer | undefined>): Promise<ConsumedRecord | Error> {
  let got: ConsumedRecord | undefined;
  const log = {
    physical: (t: string) => t,
    subscribe: async (options: { onBatch: (b: RecordBatch) => Promise<unknown> }) => {
      await options.onBatch({ topic: topics.cdrs, partition: 0, records: [record] } as unknown as RecordBatch);
      return {};
    },
  } as unknown as EventLog;
  const wrapped = driverDataEventLog(log, { keyFor: () => Promise.reject(new Error('not used')), keyById });
  try {
    await wrapped.subscribe({ group: 'g', topics: [topics.cdrs], onBatch: async (b) => void (got = b.records[0]) });
  } catch (e) {
    return e as Error;
  }
  assert.ok(got);
  return got;
}

describe('driverDataEventLog on consumption', () => {
  it('a sealed header its key does not open is handed over as not an event', async () => {
    const got = await handed(consumed(`${KEY_ID}.${randomBytes(60).toString('base64')}`), () => Promise.resolve(randomBytes(32)));
    assert.ok(!(got instanceof Error), got instanceof Error ? got.message : '');
    assert.equal(got.event, undefined);
  });

  it('a key that cannot be read throws, so the partition waits instead of quarantining', async () => {
    const got = await handed(consumed(`${KEY_ID}.${randomBytes(60).toString('base64')}`), () => Promise.reject(new Error('Postgres away')));
    assert.ok(got instanceof Error);
    assert.match(got.message, /Postgres away/);
  });

  it('an erased key reads as the placeholder, the rest as posted', async () => {
    const got = await handed(consumed(`${KEY_ID}.${randomBytes(60).toString('base64')}`), () => Promise.resolve(undefined));
    assert.ok(!(got instanceof Error));
    assert.equal((got.event?.data as typeof cdr).cdr_token.uid, 'ERASED');
    assert.equal((got.event?.data as typeof cdr).total_energy, 3);
  });
});

describe('driverDataEventLog on append', () => {
  it('a token snapshot record whose size was measured first (snapshot chunking) is still sent sealed', async () => {
    const token = { country_code: 'DE', party_id: 'EMS', uid: 'RFID-0451-DRIVER', type: 'RFID', contract_id: 'DE-EMS-C0451-7', visual_number: '0451 DRIVER', issuer: 'EMS', valid: true, whitelist: 'ALLOWED', last_updated: '2026-12-03T10:00:00.000Z' };
    const record = newEvent({ type: 'ocpi.tokens-snapshot.token.v1', source: 'projector', subject: 'DE/EMS/RFID-0451-DRIVER', key: 'DE/EMS/RFID-0451-DRIVER', data: token });
    assert.equal(recordValueLength(record), JSON.stringify(token).length);
    const appended: HubEvent[] = [];
    const log = { append: async (_topic: string, events: readonly HubEvent[]) => void appended.push(...events) } as unknown as EventLog;
    const wrapped = driverDataEventLog(log, { keyFor: () => Promise.resolve({ keyId: KEY_ID, plain: randomBytes(32) }), keyById: () => Promise.reject(new Error('not used')) });
    await wrapped.append(topics.tokensSnapshot, [record]);
    assert.equal(appended.length, 1);
    const sent = recordValue(appended[0]!) ?? '';
    for (const personal of ['RFID-0451-DRIVER', 'DE-EMS-C0451-7', '0451 DRIVER']) assert.equal(sent.includes(personal), false, personal);
    assert.ok(appended[0]!.sealedDriverData);
  });
});
