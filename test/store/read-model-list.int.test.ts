// Routed list pages on real Postgres: X-Total-Count from the per-CPO counts (migration 016)
// and pages reached by following on from a served page (offset = previous offset + rows) seeking past
// the last key served, neither of which may change what a partner gets.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { locationEventTypes, tariffEventTypes } from '@hub/events';
import { pathSubject } from '@hub/modules';
import { postgresReadModelStore } from '@hub/store';
import type { PageQuery, ReadModelStore } from '@hub/core';
import { givenTestStack } from '@hub/testing';

describe('read-model lists on Postgres', () => {
  const given = givenTestStack('read_model_list');
  let store: ReadModelStore;
  let emspPlatform = '';
  let offset = 0;

  const put = (cpo: string, id: string, second: number, lastUpdated = '2024-01-01T00:00:00Z') => ({
    offset: String(offset++),
    type: locationEventTypes.locationPut,
    subject: pathSubject({ countryCode: 'NL', partyId: cpo, id }),
    data: { country_code: 'NL', party_id: cpo, id, name: id, last_updated: lastUpdated },
    time: `2024-01-01T00:${String(Math.floor(second / 60)).padStart(2, '0')}:${String(second % 60).padStart(2, '0')}Z`,
  });
  const ids = (page: { documentsJson: string[] }) => page.documentsJson.map((d) => (JSON.parse(d) as { id: string }).id);
  const list = (page: Partial<PageQuery>, model: 'locations' | 'tariffs' = 'locations') => store.listVisible(model, emspPlatform, { offset: 0, limit: 10, ...page });

  before(async () => {
    const { pool } = given.stack;
    store = postgresReadModelStore(pool);
    // An eMSP routed to CPOs NL/AAA and NL/BBB, not to NL/CCC.
    const platform = async (name: string) => (await pool.query<{ id: string }>('insert into platforms (name) values ($1) returning id', [name])).rows[0]?.id ?? '';
    emspPlatform = await platform('emsp');
    const cpoPlatform = await platform('cpo');
    await pool.query("insert into parties (country_code, party_id, role, platform_id, name) values ('NL', 'EMS', 'EMSP', $1, 'e')", [emspPlatform]);
    for (const cpo of ['AAA', 'BBB', 'CCC']) await pool.query("insert into parties (country_code, party_id, role, platform_id, name) values ('NL', $1, 'CPO', $2, 'c')", [cpo, cpoPlatform]);
    await pool.query("insert into routing_rules (emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id, enabled) values ('NL', 'EMS', 'NL', 'AAA', true), ('NL', 'EMS', 'NL', 'BBB', true), ('NL', 'EMS', 'NL', 'CCC', false)");
    const records = Array.from({ length: 25 }, (_, i) => put(['AAA', 'BBB', 'CCC'][i % 3] as string, `L${String(i).padStart(2, '0')}`, i));
    await store.applyBatches('locations', [{ partition: 0, records }]);
  });

  it('counts only the visible CPOs’ objects, and a PUT of an existing object does not count it twice', async () => {
    assert.equal((await list({})).total, 17);
    await store.applyBatches('locations', [{ partition: 0, records: [put('AAA', 'L00', 0), put('AAA', 'NEW', 100)] }]);
    assert.equal((await list({})).total, 18);
    const { rows } = await given.stack.pool.query<{ n: string }>("select count(*) as n from locations where party_id in ('AAA', 'BBB')");
    assert.equal(Number(rows[0]?.n), 18);
  });

  it('a tariff DELETE counts the tariff out; date_from counts the changed objects only', async () => {
    const tariff = (id: string, type: string, data: Record<string, unknown>) => ({
      offset: String(offset++),
      type,
      subject: pathSubject({ countryCode: 'NL', partyId: 'AAA', id }),
      data,
      time: '2024-01-01T00:00:00Z',
    });
    const body = (id: string) => ({ country_code: 'NL', party_id: 'AAA', id, currency: 'EUR', elements: [{ price_components: [{ type: 'ENERGY', price: 0.3, step_size: 1 }] }], last_updated: '2024-01-01T00:00:00Z' });
    await store.applyBatches('tariffs', [{ partition: 0, records: [tariff('T1', tariffEventTypes.tariffPut, body('T1')), tariff('T2', tariffEventTypes.tariffPut, body('T2'))] }]);
    assert.equal((await list({}, 'tariffs')).total, 2);
    await store.applyBatches('tariffs', [{ partition: 0, records: [tariff('T1', tariffEventTypes.tariffDeleted, {})] }]);
    assert.equal((await list({}, 'tariffs')).total, 1);
    await store.applyBatches('locations', [{ partition: 0, records: [put('BBB', 'L01', 1, '2025-06-01T00:00:00Z'), put('CCC', 'L02', 2, '2025-06-01T00:00:00Z')] }]);
    const changed = await list({ dateFrom: new Date('2025-01-01T00:00:00Z') });
    assert.deepEqual([changed.total, ids(changed)], [1, ['L01']]);
  });

  it('following on from a served page gives the page the offset names, and after an earlier object is deleted skips none', async () => {
    const all = ids(await list({ limit: 100 }));
    const first = await list({ limit: 5 });
    const second = await list({ offset: 5, limit: 5 });
    assert.deepEqual([...ids(first), ...ids(second)], all.slice(0, 10));
    // A page served elsewhere (no cursor here) is the same as the one continuing from a served page.
    const fresh = postgresReadModelStore(given.stack.pool);
    assert.deepEqual(ids(await fresh.listVisible('locations', emspPlatform, { offset: 10, limit: 5 })), all.slice(10, 15));
    // An object before the cursor goes away (only tariffs are deleted by events; a direct delete
    // stands in for it): offsets would shift and skip one, the continued page does not.
    await given.stack.pool.query("delete from locations where id = 'L00'");
    const third = await list({ offset: 10, limit: 5 });
    assert.deepEqual(ids(third), all.slice(10, 15));
    assert.equal(third.total, all.length - 1);
  });

  it('a page at any offset started from a rank anchor is the page the offset names, through creations, late creations, deletions and routing changes', async () => {
    const { pool } = given.stack;
    // Anchors every 4 rows, used from offset 0 on, against plain offsets (no anchors) on the same rows.
    const anchored = postgresReadModelStore(pool, { every: 4, anchorsFrom: 0 });
    const plain = postgresReadModelStore(pool, { anchorsFrom: Number.POSITIVE_INFINITY });
    const same = async (when: string) => {
      const { total } = await plain.listVisible('locations', emspPlatform, { offset: 0, limit: 1 });
      // Descending offsets: no page continues a served one, so each starts from an anchor.
      for (let offset = total + 2; offset >= 0; offset--) {
        const got = await anchored.listVisible('locations', emspPlatform, { offset, limit: 3 });
        const want = await plain.listVisible('locations', emspPlatform, { offset, limit: 3 });
        assert.deepEqual([ids(got), got.total], [ids(want), want.total], `${when}, offset ${offset}`);
      }
    };
    await same('ranked');
    // Six new objects after every ranked one: the tail (more than one interval) is ranked and appended.
    await store.applyBatches('locations', [{ partition: 0, records: Array.from({ length: 6 }, (_, i) => put(i % 2 ? 'AAA' : 'BBB', `T${i}`, 200 + i)) }]);
    await same('after objects created at the end');
    // A late event creates an object in the middle of the creation order: every later rank moves.
    await store.applyBatches('locations', [{ partition: 0, records: [put('BBB', 'LATE', 3)] }]);
    await same('after an object created with an older time');
    // An object leaves the list (only tariffs are deleted by events; a direct delete stands in).
    await pool.query("delete from locations where id = 'L03'");
    await same('after a delete');
    // One object near the end leaves and a late one arrives near the start: every rank between moves
    // by one, and the total is as ranked; only the removals counter tells.
    await pool.query("delete from locations where id = 'T4'");
    await store.applyBatches('locations', [{ partition: 0, records: [put('AAA', 'LATE2', 1)] }]);
    await same('after a delete and a late creation');
    // CPOs BBB and CCC with as many objects each, then the eMSP routed to CCC instead of BBB: the same
    // total of other objects, only the visible owners tell.
    const counts = async () => (await pool.query<{ party_id: string; n: string }>("select party_id, count(*) as n from locations where party_id in ('BBB', 'CCC') group by 1")).rows;
    const n = Object.fromEntries((await counts()).map((r) => [r.party_id, Number(r.n)]));
    const fewer = (n['BBB'] ?? 0) < (n['CCC'] ?? 0) ? 'BBB' : 'CCC';
    const extra = Math.abs((n['BBB'] ?? 0) - (n['CCC'] ?? 0));
    await store.applyBatches('locations', [{ partition: 0, records: Array.from({ length: extra }, (_, i) => put(fewer, `E${i}`, 300 + i)) }]);
    await same('after objects created at the end of the lesser CPO');
    await pool.query("update routing_rules set enabled = (cpo_party_id = 'CCC') where cpo_party_id in ('BBB', 'CCC')");
    await same('after the route moved from one CPO to another with as many objects');
    await pool.query("update routing_rules set enabled = (cpo_party_id = 'BBB') where cpo_party_id in ('BBB', 'CCC')");
    await same('after it moved back');
  });

  it('a list narrowed to the tariffs whose prices exclude taxes (migration 032) counts and pages only those, from rank anchors and served pages alike', async () => {
    const { pool } = given.stack;
    // A 2.3.0 tariff with tax-inclusive prices and no vat, as the 2.3.0 adapter marks it (v2.3.0/prices.ts).
    const marked = { '2.3.0': { derived: { 'elements.price_components.price': true } } };
    const tariff = (cpo: string, id: string, second: number, inclusive: boolean, lastUpdated = '2024-01-01T00:00:00Z') => ({
      offset: String(offset++),
      type: tariffEventTypes.tariffPut,
      subject: pathSubject({ countryCode: 'NL', partyId: cpo, id }),
      data: { country_code: 'NL', party_id: cpo, id, currency: 'EUR', elements: [{ price_components: [{ type: 'ENERGY', price: 0.3, step_size: 1 }] }], last_updated: lastUpdated, ...(inclusive ? { hub_version_fields: marked } : {}) },
      time: `2024-01-02T00:00:${String(second).padStart(2, '0')}Z`,
    });
    await store.applyBatches('tariffs', [{ partition: 0, records: Array.from({ length: 20 }, (_, i) => tariff(['AAA', 'BBB', 'CCC'][i % 3] as string, `N${String(i).padStart(2, '0')}`, i, i % 4 === 0)) }]);
    const anchored = postgresReadModelStore(pool, { every: 4, anchorsFrom: 0 });
    const plain = postgresReadModelStore(pool, { anchorsFrom: Number.POSITIVE_INFINITY });
    // Each check with a page size of its own: a page continuing one served earlier (same size) starts
    // after the key served, by design, not at the offset; here every page must be the offset's.
    const same = async (when: string, limit: number) => {
      const everything = await plain.listVisible('tariffs', emspPlatform, { offset: 0, limit: 100 });
      const inclusive = new Set(everything.documentsJson.filter((d) => d.includes('elements.price_components.price')).map((d) => (JSON.parse(d) as { id: string }).id));
      assert.ok(inclusive.size > 0, when);
      const want = ids(everything).filter((id) => !inclusive.has(id));
      for (const reader of [anchored, plain]) {
        for (let at = want.length + 2; at >= 0; at--) {
          const got = await reader.listVisible('tariffs', emspPlatform, { offset: at, limit, pricesExcludeTaxes: true });
          assert.deepEqual([ids(got), got.total], [want.slice(at, at + limit), want.length], `${when}, offset ${at}`);
        }
        // Following the pages from the start (each continues the served one).
        const followed: string[] = [];
        for (let at = 0; at < want.length; at += limit) followed.push(...ids(await reader.listVisible('tariffs', emspPlatform, { offset: at, limit, pricesExcludeTaxes: true })));
        assert.deepEqual(followed, want, when);
      }
      // Not narrowed, the same reader still lists every tariff (a 2.3.0 reader).
      assert.equal((await anchored.listVisible('tariffs', emspPlatform, { offset: 0, limit: 1 })).total, everything.total);
    };
    await same('marked tariffs among the others', 3);
    // A marked tariff near the end sent again with a vat (unmarked), and an unmarked one near the start
    // sent again marked: the same total, every rank between moves by one.
    await store.applyBatches('tariffs', [{ partition: 0, records: [tariff('BBB', 'N16', 16, false, '2024-02-01T00:00:00Z'), tariff('BBB', 'N01', 1, true, '2024-02-01T00:00:00Z')] }]);
    await same('after one tariff changed sides each way', 2);
  });
});
