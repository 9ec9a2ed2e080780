// Newest wins on real Postgres (docs/decisions/0001-newest-state-wins.md): the projector's batches, a
// rebuild into a new generation and a quarantine re-drive all keep the newer of two updates of one
// object when the older comes later in the log; the superseded one is counted and kept for the
// operator (projection_rejects, hubctl readmodel rejects). Each pair is sent newer first, in separate
// batches and in one batch.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { locationEventTypes as L, tariffEventTypes, tokenEventTypes } from '@hub/events';
import { pathSubject, tokenObjectId } from '@hub/modules';
import type { ObjectPath, ProjectedRecord, ReadModel, ReadModelStore } from '@hub/core';
import { postgresReadModelStore } from '@hub/store';
import { createTestStack, type TestStack } from '@hub/testing';

type Json = Record<string, unknown>;

const T0 = '2026-03-01T08:00:00Z';
const T1 = '2026-03-01T09:00:00Z';
const T2 = '2026-03-01T09:00:00.700Z';

const record = (offset: number, type: string, path: ObjectPath, data: Json): ProjectedRecord => ({ offset: String(offset), type, subject: pathSubject(path), data, time: T0 });

const location = (id: string): Json => ({
  country_code: 'NL',
  party_id: 'NWC',
  id,
  name: 'Initial',
  evses: [{ uid: 'E1', status: 'AVAILABLE', connectors: [{ id: '1', standard: 'IEC_62196_T2', format: 'SOCKET', power_type: 'AC_3_PHASE', max_voltage: 230, max_amperage: 32, last_updated: T0 }], last_updated: T0 }],
  last_updated: T0,
});

describe('newest wins on Postgres: an older update never replaces a newer one', () => {
  let stack: TestStack;
  let store: ReadModelStore;
  let partition = 0;
  before(async () => {
    stack = await createTestStack('newest_wins');
    store = postgresReadModelStore(stack.pool);
  });
  after(async () => {
    await stack?.cleanup();
  });

  const documentOf = async (model: ReadModel, id: string, generation = 1): Promise<Json | undefined> =>
    (await stack.pool.query<{ document: Json }>(`select document from ${model} where generation = $1 and id = upper($2)`, [generation, id])).rows[0]?.document;
  const evse = (doc: Json | undefined) => ((doc?.['evses'] as Json[] | undefined) ?? [])[0] ?? {};
  const connector = (doc: Json | undefined) => ((evse(doc)['connectors'] as Json[] | undefined) ?? [])[0] ?? {};

  /** The location events of each case: a PUT creating it, then the newer update, then the older one. */
  const locationCases = (id: string) => {
    const loc = { countryCode: 'NL', partyId: 'NWC', id };
    const e1 = { ...loc, evseUid: 'E1' };
    const c1 = { ...e1, connectorId: '1' };
    return [
      { what: 'EVSE status', newer: [L.evsePatched, e1, { status: 'CHARGING', last_updated: T2 }], older: [L.evsePatched, e1, { status: 'AVAILABLE', last_updated: T1 }], check: (d?: Json) => evse(d)['status'] === 'CHARGING' },
      { what: 'connector max_amperage', newer: [L.connectorPatched, c1, { max_amperage: 16, last_updated: T2 }], older: [L.connectorPatched, c1, { max_amperage: 20, last_updated: T1 }], check: (d?: Json) => connector(d)['max_amperage'] === 16 },
      { what: 'location name', newer: [L.locationPatched, loc, { name: 'Newer', last_updated: T2 }], older: [L.locationPatched, loc, { name: 'Older', last_updated: T1 }], check: (d?: Json) => d?.['name'] === 'Newer' },
      { what: 'location PUT after a newer EVSE PATCH', newer: [L.evsePatched, e1, { status: 'CHARGING', last_updated: T2 }], older: [L.locationPut, loc, { ...location(id), name: 'Older PUT', last_updated: T1 }], check: (d?: Json) => d?.['name'] === 'Initial' && evse(d)['status'] === 'CHARGING' },
    ] as const;
  };

  for (const oneBatch of [false, true]) {
    it(`locations: ${oneBatch ? 'in one batch' : 'in separate batches'}, the older update is superseded and counted`, async () => {
      for (let i = 0; i < locationCases('').length; i++) {
        const id = `NW-${oneBatch ? 'ONE' : 'SEP'}-${i}`;
        const cases = locationCases(id)[i];
        assert.ok(cases);
        const p = partition++;
        const create = record(0, L.locationPut, { countryCode: 'NL', partyId: 'NWC', id }, location(id));
        const newer = record(1, cases.newer[0], cases.newer[1], cases.newer[2]);
        const older = record(2, cases.older[0], cases.older[1], cases.older[2]);
        const outcomes = oneBatch
          ? await store.applyBatches('locations', [{ partition: p, records: [create, newer, older] }])
          : [...(await store.applyBatches('locations', [{ partition: p, records: [create, newer] }])), ...(await store.applyBatches('locations', [{ partition: p, records: [older] }]))];
        const doc = await documentOf('locations', id);
        assert.ok(cases.check(doc), `${cases.what}: the newer state stays (${JSON.stringify(doc)})`);
        assert.equal(outcomes.reduce((n, o) => n + o.superseded, 0), 1, `${cases.what}: one superseded event counted`);
        const rejects = await store.rejects('locations', 1000);
        assert.ok(rejects.some((r) => r.partition === p && r.offset === '2' && r.reason.startsWith('superseded:')), `${cases.what}: the operator sees it`);
      }
    });
  }

  it('tariffs: a PUT older than the stored tariff is superseded; equal times apply in log order', async () => {
    const path = { countryCode: 'NL', partyId: 'NWC', id: 'TARIFF-NW' };
    const tariff = (currency: string, last_updated: string) => ({ country_code: 'NL', party_id: 'NWC', id: 'TARIFF-NW', currency, elements: [{ price_components: [{ type: 'ENERGY', price: 0.3, step_size: 1 }] }], last_updated });
    const p = partition++;
    await store.applyBatches('tariffs', [{ partition: p, records: [record(0, tariffEventTypes.tariffPut, path, tariff('EUR', T2))] }]);
    const [outcome] = await store.applyBatches('tariffs', [{ partition: p, records: [record(1, tariffEventTypes.tariffPut, path, tariff('USD', T1))] }]);
    assert.equal(outcome?.superseded, 1);
    assert.equal((await documentOf('tariffs', 'TARIFF-NW'))?.['currency'], 'EUR');
    await store.applyBatches('tariffs', [{ partition: p, records: [record(2, tariffEventTypes.tariffPut, path, tariff('CHF', T2))] }]);
    assert.equal((await documentOf('tariffs', 'TARIFF-NW'))?.['currency'], 'CHF', 'an equal time applies');
  });

  it('tokens: a PUT or PATCH older than the stored token is superseded', async () => {
    const path = { countryCode: 'NL', partyId: 'NWE', id: tokenObjectId('NW-TOKEN', 'RFID') };
    const token = (valid: boolean, last_updated: string) => ({ country_code: 'NL', party_id: 'NWE', uid: 'NW-TOKEN', type: 'RFID', contract_id: 'NL-NWE-C12345678-X', issuer: 'NW', valid, whitelist: 'ALLOWED', last_updated });
    const p = partition++;
    const outcomes = await store.applyBatches('tokens', [
      { partition: p, records: [record(0, tokenEventTypes.tokenPut, path, token(false, T2)), record(1, tokenEventTypes.tokenPatched, path, { valid: true, last_updated: T1 }), record(2, tokenEventTypes.tokenPut, path, token(true, T1))] },
    ]);
    assert.equal(outcomes[0]?.superseded, 2);
    const stored = (await stack.pool.query<{ document: Json }>('select document from tokens where generation = 1 and party_id = $1', ['NWE'])).rows[0]?.document;
    assert.equal(stored?.['valid'], false, 'the newer valid=false stays');
  });

  it('a rebuild into a new generation gives the same rows as the live path, and a re-drive of an older record is superseded', async () => {
    const id = 'NW-REBUILD';
    const loc = { countryCode: 'NL', partyId: 'NWC', id };
    const events = [
      record(0, L.locationPut, loc, location(id)),
      record(1, L.evsePatched, { ...loc, evseUid: 'E1' }, { status: 'CHARGING', last_updated: T2 }),
      record(2, L.evsePatched, { ...loc, evseUid: 'E1' }, { status: 'AVAILABLE', last_updated: T1 }),
    ];
    const p = partition++;
    for (const e of events) await store.applyBatches('locations', [{ partition: p, records: [e] }]);
    const live = await documentOf('locations', id);
    const { building } = await store.beginRebuild('locations');
    // A rebuild reads the topic in larger batches than the live path: all three at once.
    await store.applyBatches('locations', [{ partition: p, records: events }], building);
    assert.deepEqual(await documentOf('locations', id, building), live);
    assert.equal(evse(live)['status'], 'CHARGING');
    // The quarantine re-drive path applies one record outside the position order.
    assert.equal(await store.redrive('locations', { ...events[2]!, offset: '3' }), 'superseded');
    assert.equal(evse(await documentOf('locations', id))['status'], 'CHARGING');
  });
});
