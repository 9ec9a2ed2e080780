// What the driver-data log appends for each topic that carries a driver's personal data
// (docs/decisions/0013-erasure-by-destroying-data-keys.md, Fields covered and Event format): which
// token's key it asks for, which fields hold the key id, what the sealed header holds (its JSON in
// this order is what the ciphertext encrypts), and the subject and Kafka key (pseudonymous for a
// token). And that consumption gives the events back as they were appended. The event log and the
// key table are fakes.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { DriverToken, EventLog, RecordBatch } from '@hub/core';
import { topics, type HubEvent } from '@hub/events';
import { openSealedEntries } from '@hub/registry';
import { driverDataEventLog } from '../src/driver-data-log.ts';

const KEY_ID = '0b6f7c1e-4d2a-4f3b-8c9d-1e2f3a4b5c6d';
const DATA_KEY = randomBytes(32);

function event(subject: string, data: unknown): HubEvent {
  return { id: 'e1', type: 'test.event.v1', source: 'test', subject, time: '2026-01-01T00:00:00.000Z', key: subject.toUpperCase(), data };
}

/** The log's appends and the tokens whose keys were asked for; `consume` hands the appended events back. */
function harness() {
  const appended = new Map<string, HubEvent[]>();
  const asked: DriverToken[] = [];
  const log = {
    physical: (t: string) => t,
    append: async (topic: string, events: readonly HubEvent[]) => void appended.set(topic, [...events]),
    subscribe: async (options: { topics: string[]; onBatch: (b: RecordBatch) => Promise<unknown> }) => {
      const topic = options.topics[0]!;
      const records = (appended.get(topic) ?? []).map((e, i) => ({ topic, partition: 0, offset: String(i), key: null, value: null, headers: {}, event: e }));
      await options.onBatch({ topic, partition: 0, records } as unknown as RecordBatch);
      return {};
    },
  } as unknown as EventLog;
  const wrapped = driverDataEventLog(log, {
    keyFor: async (token) => {
      asked.push(token);
      return { keyId: KEY_ID, plain: DATA_KEY };
    },
    keyById: async (id) => (id === KEY_ID ? DATA_KEY : undefined),
  });
  const consume = async (topic: string): Promise<(HubEvent | undefined)[]> => {
    let got: (HubEvent | undefined)[] = [];
    await wrapped.subscribe({ group: 'g', topics: [topic], onBatch: async (b) => void (got = b.records.map((r) => r.event)) });
    return got;
  };
  return { wrapped, appended, asked, consume };
}

async function sealOne(topic: string, e: HubEvent) {
  const h = harness();
  await h.wrapped.append(topic, [e]);
  const out = h.appended.get(topic)![0]!;
  const entries = out.sealedDriverData ? JSON.stringify(openSealedEntries(out.sealedDriverData, DATA_KEY)) : undefined;
  return { out, entries, asked: h.asked, back: (await h.consume(topic))[0] };
}

const token = { country_code: 'DE', party_id: 'EMS', uid: 'Uid-1', type: 'APP_USER', contract_id: 'DE-EMS-C1', visual_number: 'V1', issuer: 'EMS', group_id: 'G1', energy_contract: { supplier_name: 'Green', contract_id: 'EC1' }, last_updated: '2026-01-01T00:00:00Z' };
const cdrToken = { country_code: 'DE', party_id: 'EMS', uid: 'Uid-1', contract_id: 'DE-EMS-C1' };

describe('driverDataEventLog on append', () => {
  for (const topic of [topics.tokens, topics.tokensSnapshot]) {
    it(`${topic}: a token's fields, subject and key are sealed; subject and key name it by its key id`, async () => {
      const { out, entries, asked, back } = await sealOne(topic, event('DE/EMS/Uid-1|APP_USER', token));
      assert.deepEqual(asked, [{ countryCode: 'DE', partyId: 'EMS', uid: 'Uid-1', type: 'APP_USER' }]);
      assert.equal(out.subject, `DE/EMS/${KEY_ID}%7CAPP_USER`);
      assert.equal(out.key, `DE/EMS/${KEY_ID.toUpperCase()}|APP_USER`);
      assert.deepEqual(out.data, { ...token, uid: KEY_ID, contract_id: KEY_ID, visual_number: KEY_ID, group_id: KEY_ID, energy_contract: { supplier_name: 'Green', contract_id: KEY_ID } });
      assert.equal(entries, JSON.stringify({ '@subject': 'DE/EMS/Uid-1|APP_USER', uid: 'Uid-1', visual_number: 'V1', contract_id: 'DE-EMS-C1', group_id: 'G1', 'energy_contract.contract_id': 'EC1' }));
      assert.deepEqual(back, { ...out, subject: 'DE/EMS/Uid-1|APP_USER', key: 'DE/EMS/UID-1|APP_USER', data: token });
    });
  }

  it('a token snapshot tombstone takes the pseudonymous subject and key, and seals nothing', async () => {
    const { out, asked } = await sealOne(topics.tokensSnapshot, event('DE/EMS/Uid-1|RFID', null));
    assert.deepEqual(asked, [{ countryCode: 'DE', partyId: 'EMS', uid: 'Uid-1', type: 'RFID' }]);
    assert.equal(out.subject, `DE/EMS/${KEY_ID}%7CRFID`);
    assert.equal(out.key, `DE/EMS/${KEY_ID.toUpperCase()}|RFID`);
    assert.equal(out.data, null);
    assert.equal(out.sealedDriverData, undefined);
  });

  for (const topic of [topics.sessions, topics.cdrs]) {
    it(`${topic}: the cdr_token's uid and contract_id are sealed under its token's key (type RFID when absent); subject and key stay`, async () => {
      const object = { id: 'S1', cdr_token: cdrToken, kwh: 3, hub_version_fields: { '2.1.1': { kept: { auth_id: 'A1' } } } };
      const e = event('NL/CPO/S1', object);
      const { out, entries, asked, back } = await sealOne(topic, e);
      assert.deepEqual(asked, [{ countryCode: 'DE', partyId: 'EMS', uid: 'Uid-1', type: 'RFID' }]);
      assert.equal(out.subject, 'NL/CPO/S1');
      assert.equal(out.key, 'NL/CPO/S1');
      assert.deepEqual(out.data, { ...object, cdr_token: { ...cdrToken, uid: KEY_ID, contract_id: KEY_ID }, hub_version_fields: { '2.1.1': { kept: { auth_id: KEY_ID } } } });
      assert.equal(entries, JSON.stringify({ 'cdr_token.uid': 'Uid-1', 'cdr_token.contract_id': 'DE-EMS-C1', 'hub_version_fields.2.1.1.kept.auth_id': 'A1' }));
      assert.deepEqual(back, { ...e, sealedDriverData: out.sealedDriverData });
    });
  }

  it("ocpi.commands.v1: the request's token is sealed under its key; subject and key stay", async () => {
    const object = { command: 'START_SESSION', request: { response_url: 'https://x', token, location_id: 'L1' } };
    const e = event('CMD-1', object);
    const { out, entries, asked, back } = await sealOne(topics.commands, e);
    assert.deepEqual(asked, [{ countryCode: 'DE', partyId: 'EMS', uid: 'Uid-1', type: 'APP_USER' }]);
    assert.equal(out.subject, 'CMD-1');
    assert.equal(out.key, 'CMD-1');
    assert.deepEqual(out.data, { ...object, request: { ...object.request, token: { ...token, uid: KEY_ID, contract_id: KEY_ID, visual_number: KEY_ID, group_id: KEY_ID, energy_contract: { supplier_name: 'Green', contract_id: KEY_ID } } } });
    assert.equal(entries, JSON.stringify({ 'request.token.uid': 'Uid-1', 'request.token.visual_number': 'V1', 'request.token.contract_id': 'DE-EMS-C1', 'request.token.group_id': 'G1', 'request.token.energy_contract.contract_id': 'EC1' }));
    assert.deepEqual(back, { ...e, sealedDriverData: out.sealedDriverData });
  });

  it('an event without a driver token, and a topic without personal data, are appended as they are', async () => {
    for (const [topic, e] of [
      [topics.sessions, event('NL/CPO/S2', { id: 'S2', kwh: 1 })],
      [topics.commands, event('CMD-2', { command: 'STOP_SESSION', request: { session_id: 'S1' } })],
      [topics.cdrs, event('NL/CPO/C1', null)],
      [topics.locations, event('NL/CPO/L1', { id: 'L1', cdr_token: cdrToken })],
      [topics.tariffs, event('NL/CPO/T1', { id: 'T1' })],
    ] as const) {
      const { out, asked } = await sealOne(topic, e);
      assert.equal(out, e, topic);
      assert.deepEqual(asked, [], topic);
    }
  });
});
