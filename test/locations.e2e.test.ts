// Locations and tariffs end to end: a simulated CPO pushes the OCPI 2.2.1 examples, the
// projector builds the read models, a simulated eMSP pulls them back through routing and pagination.
// Real ingress and projector processes, real Kafka and Postgres.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { topics } from '@hub/events';
import { ensureTopics } from '@hub/event-log';
import { call, createTestStack, startService, topicDefinitions, type ServiceProcess, type TestStack } from '@hub/testing';
import { followPages, freePort, hubctl, onboard, until, type OnboardedPlatform } from './helpers.ts';

const examples = new URL('../../shared/ocpi-2.2.1/examples/', import.meta.url);
const example = (name: string) => JSON.parse(readFileSync(new URL(name, examples), 'utf8')) as Record<string, unknown>;

type Json = Record<string, unknown>;

describe('locations and tariffs: push, project, pull', () => {
  let stack: TestStack;
  let ingress: ServiceProcess;
  let projector: ServiceProcess;
  let hub: string;
  let env: Record<string, string>;
  let cpo: OnboardedPlatform;
  let emsp: OnboardedPlatform;
  let outsider: OnboardedPlatform;
  const cpoParties = [
    { countryCode: 'BE', partyId: 'BEC' },
    { countryCode: 'SE', partyId: 'EVC' },
    { countryCode: 'NL', partyId: 'ALF' },
    { countryCode: 'NL', partyId: 'ALL' },
    { countryCode: 'DE', partyId: 'ALL' },
  ];

  before(async () => {
    stack = await createTestStack('locations');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', PAGE_LIMIT_MAX: '50' });
    ingress = await startService('ingress', env, /ingress listening/);
    projector = await startService('projector', env, /projector running/);
    cpo = await onboard(hub, env, 'Example CPOs', cpoParties.map((p) => ({ role: 'CPO' as const, ...p })));
    emsp = await onboard(hub, env, 'Example eMSP', [{ role: 'EMSP', countryCode: 'NL', partyId: 'EMS' }]);
    outsider = await onboard(hub, env, 'Unrouted eMSP', [{ role: 'EMSP', countryCode: 'FR', partyId: 'OUT' }]);
    for (const p of cpoParties) {
      const out = await hubctl(env, ['routing', 'enable', '--emsp', 'NL/EMS', '--cpo', `${p.countryCode}/${p.partyId}`]);
      assert.equal(out.code, 0, out.stderr);
    }
  });

  after(async () => {
    await Promise.allSettled([ingress?.stop(), projector?.stop(), cpo?.partner.close(), emsp?.partner.close(), outsider?.partner.close()]);
    await stack?.cleanup();
  });

  const put = (path: string, body: unknown, token = cpo.token) => call(hub, 'PUT', `/ocpi/2.2.1/${path}`, { token, body });
  const patch = (path: string, body: unknown, token = cpo.token) => call(hub, 'PATCH', `/ocpi/2.2.1/${path}`, { token, body });
  /** The served generation's locations, with their creation and update times, in key order. */
  const activeRows = async () =>
    (await stack.pool.query<{ k: string; d: string; c: string; u: string }>(
      `select country_code || '/' || party_id || '/' || id as k, document::text as d, created_at::text as c, last_updated::text as u from locations
        where generation = (select active from read_model_generations where model = 'locations') order by 1`,
    )).rows;
  const locationPath = (l: Json) => `locations/${String(l['country_code'])}/${String(l['party_id'])}/${String(l['id'])}`;

  const locationFiles = readdirSync(examples).filter((f) => /^location_example.*\.json$/.test(f)).sort();
  const tariffFiles = readdirSync(examples).filter((f) => /^tariff_\d+_.*\.json$/.test(f)).sort((a, b) => Number(a.split('_')[1]) - Number(b.split('_')[1]));

  it('the CPO pushes every OCPI location and tariff example and the eMSP pulls back exactly them', async () => {
    const expectedLocations = new Map<string, Json>();
    for (const file of locationFiles) {
      const location = example(file);
      const res = await put(locationPath(location), location);
      assert.equal(res.body.status_code, 1000, `${file}: ${res.text}`);
      expectedLocations.set(locationPath(location), location); // a later PUT of the same id replaces it
    }
    const expectedTariffs = new Map<string, Json>();
    for (const file of tariffFiles) {
      const tariff = example(file);
      const res = await put(`tariffs/${String(tariff['country_code'])}/${String(tariff['party_id'])}/${String(tariff['id'])}`, tariff);
      assert.equal(res.body.status_code, 1000, `${file}: ${res.text}`);
      // Newest wins (docs/decisions/0001-newest-state-wins.md): tariff_8 reuses tariff_6's id with an
      // older last_updated, so the eMSP keeps seeing tariff_6.
      const held = expectedTariffs.get(String(tariff['id']));
      if (!held || Date.parse(String(tariff['last_updated'])) >= Date.parse(String(held['last_updated']))) expectedTariffs.set(String(tariff['id']), tariff);
    }
    // The CPO reads its own write at once (read-your-writes: the detail GET waits for the projection).
    const last = example(locationFiles.at(-1) ?? '');
    const own = await call<Json>(hub, 'GET', `/ocpi/2.2.1/${locationPath(last)}`, { token: cpo.token });
    assert.deepEqual(own.body.data, last);

    // The eMSP reads what the projector has applied so far: read-your-writes is the CPO's own, and a
    // tariff's last PUT (another topic than the location read above) may still be on its way. So the
    // pulls are repeated until they show every last PUT (or 30 s pass), then compared.
    const pullLocations = async () => (await followPages<Json>(hub, '/ocpi/2.2.1/locations?limit=2', emsp.token)).items;
    const pullTariffs = async () => new Map((await followPages<Json>(hub, '/ocpi/2.2.1/tariffs', emsp.token)).items.map((t) => [String(t['id']), t]));
    const sameLocations = (items: Json[]) => items.length === expectedLocations.size && items.every((l) => isDeepStrictEqual(l, expectedLocations.get(locationPath(l))));
    await until('the eMSP pulls every location as last put', async () => sameLocations(await pullLocations()), 30_000).catch(() => undefined);
    await until('the eMSP pulls every tariff as last put', async () => isDeepStrictEqual(await pullTariffs(), expectedTariffs), 30_000).catch(() => undefined);
    const locations = await pullLocations();
    assert.equal(locations.length, expectedLocations.size);
    for (const l of locations) assert.deepEqual(l, expectedLocations.get(locationPath(l)), `location ${locationPath(l)}`);
    assert.deepEqual(await pullTariffs(), expectedTariffs);
  });

  it('PATCH fragments change a location as OCPI says, parents take the child last_updated', async () => {
    const base = example('location_example.json'); // BE/BEC/LOC1 with EVSEs 3256 (connectors 1, 2) and 3257
    const path = locationPath(base);
    assert.equal((await put(path, base)).body.status_code, 1000);
    const status = example('location_patch_example_status.json');
    assert.equal((await patch(`${path}/3256`, status)).body.status_code, 1000);
    const name = example('location_patch_example_location.json');
    assert.equal((await patch(path, name)).body.status_code, 1000);
    const tariff = { ...example('location_patch_example_tariff.json'), last_updated: '2019-06-24T12:40:00Z' };
    assert.equal((await patch(`${path}/3256/2`, tariff)).body.status_code, 1000);
    const removed = { ...example('location_patch_example_remove_evse.json'), last_updated: '2019-06-24T12:41:00Z' };
    assert.equal((await patch(`${path}/3257`, removed)).body.status_code, 1000);

    const got = (await call<Json>(hub, 'GET', `/ocpi/2.2.1/${path}`, { token: cpo.token })).body.data as Json;
    const evses = got['evses'] as Json[];
    const e3256 = evses.find((e) => e['uid'] === '3256') as Json;
    const e3257 = evses.find((e) => e['uid'] === '3257') as Json;
    assert.equal(got['name'], 'Interparking Gent Zuid');
    assert.equal(e3256['status'], 'CHARGING');
    assert.equal(e3257['status'], 'REMOVED');
    const c2 = (e3256['connectors'] as Json[]).find((c) => c['id'] === '2') as Json;
    assert.deepEqual(c2['tariff_ids'], ['15']);
    assert.equal(c2['last_updated'], '2019-06-24T12:40:00Z');
    assert.equal(e3256['last_updated'], '2019-06-24T12:40:00Z', 'EVSE takes its connector last_updated');
    assert.equal(got['last_updated'], '2019-06-24T12:41:00Z', 'location takes the latest child last_updated');
    // Everything not patched is as pushed.
    assert.deepEqual(got['coordinates'], base['coordinates']);
    assert.equal((e3256['connectors'] as Json[]).length, 2);
    // Detail GETs of an EVSE and a connector.
    const evse = await call<Json>(hub, 'GET', `/ocpi/2.2.1/${path}/3256`, { token: emsp.token });
    assert.equal(evse.body.data?.['status'], 'CHARGING');
    const connector = await call<Json>(hub, 'GET', `/ocpi/2.2.1/${path}/3256/2`, { token: emsp.token });
    assert.deepEqual(connector.body.data?.['tariff_ids'], ['15']);
  });

  it('an EVSE and a connector can be PUT into a known location', async () => {
    const path = 'locations/BE/BEC/LOC1';
    const evse = { ...((example('location_example.json')['evses'] as Json[])[1] as Json), uid: 'NEW1', last_updated: '2020-01-01T00:00:00Z' };
    assert.equal((await put(`${path}/NEW1`, evse)).body.status_code, 1000);
    const connector = { ...(((evse as Json)['connectors'] as Json[])[0] as Json), id: '9', last_updated: '2020-01-02T00:00:00Z' };
    assert.equal((await put(`${path}/NEW1/9`, connector)).body.status_code, 1000);
    const got = (await call<Json>(hub, 'GET', `/ocpi/2.2.1/${path}`, { token: cpo.token })).body.data as Json;
    const added = (got['evses'] as Json[]).find((e) => e['uid'] === 'NEW1') as Json;
    assert.equal((added['connectors'] as Json[]).length, 2);
    assert.equal(got['last_updated'], '2020-01-02T00:00:00Z');
  });

  it('a connector dropped by an EVSE PUT is unknown afterwards: its PATCH gets 2003, although it was PATCHed before', async () => {
    const path = 'locations/BE/BEC/LOC1';
    const evse: Json = { ...((example('location_example.json')['evses'] as Json[])[0] as Json), uid: 'DROP1', last_updated: '2020-02-01T00:00:00Z' };
    assert.equal((evse['connectors'] as Json[]).length, 2);
    assert.equal((await put(`${path}/DROP1`, evse)).body.status_code, 1000);
    await call(hub, 'GET', `/ocpi/2.2.1/${path}`, { token: cpo.token }); // the projection catches up
    const tariffPatch = { tariff_ids: ['11'], last_updated: '2020-02-02T00:00:00Z' };
    assert.equal((await patch(`${path}/DROP1/2`, tariffPatch)).body.status_code, 1000, 'connector 2 is known now');
    const withoutConnector2 = { ...evse, connectors: (evse['connectors'] as Json[]).filter((c) => c['id'] !== '2'), last_updated: '2020-02-03T00:00:00Z' };
    assert.equal((await put(`${path}/DROP1`, withoutConnector2)).body.status_code, 1000);
    await call(hub, 'GET', `/ocpi/2.2.1/${path}`, { token: cpo.token });
    const refused = await patch(`${path}/DROP1/2`, { ...tariffPatch, last_updated: '2020-02-04T00:00:00Z' });
    assert.equal(refused.body.status_code, 2003);
    assert.equal((await patch(`${path}/DROP1/1`, { ...tariffPatch, last_updated: '2020-02-04T00:00:00Z' })).body.status_code, 1000, 'the connector kept is still known');
  });

  it('a CPO deletes its tariff (mod_tariffs.asciidoc, DELETE): eMSPs no longer get it; a second DELETE, a foreign one and a PATCH are refused', async () => {
    const tariff = { ...example('tariff_1_simple_2hour.json'), country_code: 'DE', party_id: 'ALL', id: 'DEL1', last_updated: '2021-05-01T00:00:00Z' };
    assert.equal((await put('tariffs/DE/ALL/DEL1', tariff)).body.status_code, 1000);
    await call(hub, 'GET', '/ocpi/2.2.1/tariffs/DE/ALL/DEL1', { token: cpo.token });
    const listed = async () => (await followPages<Json>(hub, '/ocpi/2.2.1/tariffs', emsp.token)).items.some((t) => t['id'] === 'DEL1');
    assert.equal(await listed(), true);

    const foreign = await call(hub, 'DELETE', '/ocpi/2.2.1/tariffs/DE/ALL/DEL1', { token: emsp.token });
    assert.equal(foreign.status, 403);
    assert.equal(await listed(), true, 'a party that is not its CPO cannot delete it');
    assert.equal((await patch('tariffs/DE/ALL/DEL1', { last_updated: '2021-05-02T00:00:00Z' })).status, 405);

    const deleted = await call(hub, 'DELETE', '/ocpi/2.2.1/tariffs/DE/ALL/DEL1', { token: cpo.token });
    assert.equal(deleted.status, 200);
    assert.equal(deleted.body.status_code, 1000);
    const afterwards = await call(hub, 'GET', '/ocpi/2.2.1/tariffs/DE/ALL/DEL1', { token: cpo.token }); // reads its own write
    assert.equal(afterwards.status, 404);
    assert.equal((await call(hub, 'GET', '/ocpi/2.2.1/tariffs/DE/ALL/DEL1', { token: emsp.token })).status, 404);
    assert.equal(await listed(), false);
    const again = await call(hub, 'DELETE', '/ocpi/2.2.1/tariffs/DE/ALL/DEL1', { token: cpo.token });
    assert.equal(again.status, 404);
    assert.equal(again.body.status_code, 2000);
    // Locations are never deleted (mod_locations.asciidoc: no DELETE in the Receiver interface).
    assert.equal((await call(hub, 'DELETE', '/ocpi/2.2.1/locations/BE/BEC/LOC1', { token: cpo.token })).status, 405);
    // A tariff pushed again after its deletion is a tariff again.
    assert.equal((await put('tariffs/DE/ALL/DEL1', tariff)).body.status_code, 1000);
    await call(hub, 'GET', '/ocpi/2.2.1/tariffs/DE/ALL/DEL1', { token: cpo.token });
    assert.equal(await listed(), true);
  });

  it('a PATCH cannot give a location publish_allowed_to while it is published, nor publish it while it has one', async () => {
    const limited: Json = { ...example('location_example_uc4_limited_visibility.json'), country_code: 'NL', party_id: 'ALF', id: 'PUB1', last_updated: '2020-04-01T00:00:00Z' };
    assert.equal(limited['publish'], false);
    assert.equal((await put('locations/NL/ALF/PUB1', limited)).body.status_code, 1000);
    const allowed = limited['publish_allowed_to'];
    assert.equal((await patch('locations/NL/ALF/PUB1', { publish: true, last_updated: '2020-04-02T00:00:00Z' })).body.status_code, 2001, 'would keep publish_allowed_to on a published location');
    const { publish_allowed_to: _dropped, ...published } = limited;
    assert.equal((await put('locations/NL/ALF/PUB2', { ...published, id: 'PUB2', publish: true })).body.status_code, 1000);
    assert.equal((await patch('locations/NL/ALF/PUB2', { publish_allowed_to: allowed, last_updated: '2020-04-02T00:00:00Z' })).body.status_code, 2001);
    assert.equal((await patch('locations/NL/ALF/PUB2', { publish: false, publish_allowed_to: allowed, last_updated: '2020-04-03T00:00:00Z' })).body.status_code, 1000, 'both in one PATCH');
    assert.equal((await patch('locations/NL/ALF/PUB1', { publish_allowed_to: allowed, last_updated: '2020-04-03T00:00:00Z' })).body.status_code, 1000, 'on an unpublished location');
    const got = await call<Json>(hub, 'GET', '/ocpi/2.2.1/locations/NL/ALF/PUB2', { token: cpo.token });
    assert.equal(got.body.data?.['publish'], false);
    assert.deepEqual(got.body.data?.['publish_allowed_to'], allowed);
  });

  it('ids are case-insensitive (CiString, types.asciidoc): LOC and loc are one location, served as the CPO wrote it', async () => {
    const base = example('location_example.json');
    const location: Json = { ...base, country_code: 'NL', party_id: 'ALF', id: 'CaseLoc1', last_updated: '2020-03-01T00:00:00Z' };
    assert.equal((await put('locations/NL/ALF/caseloc1', location)).body.status_code, 1000, 'path and body ids differ only in case');
    const evseUid = String(((location['evses'] as Json[])[0] as Json)['uid']);
    const patched = await patch(`locations/nl/alf/CASELOC1/${evseUid.toLowerCase()}`, { status: 'BLOCKED', last_updated: '2020-03-02T00:00:00Z' });
    assert.equal(patched.body.status_code, 1000);
    const got = await call<Json>(hub, 'GET', '/ocpi/2.2.1/locations/NL/ALF/CASELOC1', { token: cpo.token });
    assert.equal(got.body.data?.['id'], 'CaseLoc1');
    assert.equal(((got.body.data?.['evses'] as Json[])[0] as Json)['status'], 'BLOCKED');
    const viaEmsp = await call<Json>(hub, 'GET', `/ocpi/2.2.1/locations/NL/ALF/caseLOC1/${evseUid.toLowerCase()}`, { token: emsp.token });
    assert.equal(viaEmsp.body.data?.['status'], 'BLOCKED');
    const listed = (await followPages<Json>(hub, '/ocpi/2.2.1/locations?limit=50', emsp.token)).items.filter((l) => String(l['id']).toUpperCase() === 'CASELOC1');
    assert.equal(listed.length, 1, 'one location, not two');
  });

  it('routing: an eMSP without a rule sees nothing; enabling shows the CPO, disabling hides it again', async () => {
    const none = await call<Json[]>(hub, 'GET', '/ocpi/2.2.1/locations', { token: outsider.token });
    assert.equal(none.body.status_code, 1000);
    assert.deepEqual(none.body.data, []);
    assert.equal(none.headers['x-total-count'], '0');
    assert.equal(none.headers['link'], undefined);
    const hidden = await call(hub, 'GET', '/ocpi/2.2.1/locations/BE/BEC/LOC1', { token: outsider.token });
    assert.equal(hidden.status, 404);
    assert.equal(hidden.body.status_code, 2003);
    assert.equal((await call(hub, 'GET', '/ocpi/2.2.1/tariffs/DE/ALL/12', { token: outsider.token })).status, 404);

    await hubctl(env, ['routing', 'enable', '--emsp', 'FR/OUT', '--cpo', 'BE/BEC']);
    const some = await call<Json[]>(hub, 'GET', '/ocpi/2.2.1/locations', { token: outsider.token });
    assert.deepEqual(some.body.data?.map((l) => `${String(l['country_code'])}/${String(l['party_id'])}`), ['BE/BEC']);
    assert.equal((await call(hub, 'GET', '/ocpi/2.2.1/locations/BE/BEC/LOC1', { token: outsider.token })).status, 200);

    await hubctl(env, ['routing', 'disable', '--emsp', 'FR/OUT', '--cpo', 'BE/BEC']);
    assert.deepEqual((await call<Json[]>(hub, 'GET', '/ocpi/2.2.1/locations', { token: outsider.token })).body.data, []);
  });

  it('pagination: Link following returns every record exactly once; date_from syncs incrementally', async () => {
    const party = { countryCode: 'NL', partyId: 'ALL' };
    const template = example('location_example_uc4_limited_visibility.json');
    for (let i = 0; i < 23; i++) {
      const id = `PAGE-${String(i).padStart(3, '0')}`;
      // last_updated deliberately out of creation order: second (7i mod 23) of the minute.
      const location = { ...template, id, last_updated: `2021-01-01T00:00:${String((i * 7) % 23).padStart(2, '0')}Z` };
      assert.equal((await put(`locations/${party.countryCode}/${party.partyId}/${id}`, location)).body.status_code, 1000);
    }
    await call(hub, 'GET', '/ocpi/2.2.1/locations/NL/ALL/PAGE-022', { token: cpo.token }); // catch the projection up
    const all = await followPages<Json>(hub, '/ocpi/2.2.1/locations?limit=4', emsp.token);
    const ids = all.items.map((l) => `${String(l['country_code'])}/${String(l['party_id'])}/${String(l['id'])}`);
    assert.equal(new Set(ids).size, ids.length, 'no record twice');
    assert.ok(ids.filter((id) => id.includes('PAGE-')).length === 23, 'every record once');
    assert.equal(all.items.length, Number(all.totals[0]));
    assert.equal(all.pages, Math.ceil(all.items.length / 4), 'a Link on every page but the last');
    // Creation order (transport_and_format.asciidoc, Paginated Response): the PUT order, not last_updated.
    const pageIds = ids.filter((id) => id.includes('PAGE-'));
    assert.deepEqual(pageIds, [...pageIds].sort());
    assert.notDeepEqual(
      all.items.filter((l) => String(l['id']).startsWith('PAGE-')).map((l) => String(l['last_updated'])),
      all.items.filter((l) => String(l['id']).startsWith('PAGE-')).map((l) => String(l['last_updated'])).sort(),
      'the fixture pushes last_updated out of creation order',
    );
    // The limit is capped by the server maximum and reported in X-Limit.
    const capped = await call<Json[]>(hub, 'GET', '/ocpi/2.2.1/locations?limit=500', { token: emsp.token });
    assert.equal(capped.headers['x-limit'], '50');
    // ... and a smaller limit is the one applied (transport_and_format.asciidoc, Pagination: X-Limit).
    for (const list of ['locations', 'tariffs']) assert.equal((await call<Json[]>(hub, 'GET', `/ocpi/2.2.1/${list}?limit=2`, { token: emsp.token })).headers['x-limit'], '2', list);
    // An offset past the end is an empty, valid page.
    const empty = await call<Json[]>(hub, 'GET', '/ocpi/2.2.1/locations?offset=10000', { token: emsp.token });
    assert.deepEqual(empty.body.data, []);

    // Incremental: only what changed since the last sync, the Link keeps the filter.
    const syncTime = '2022-01-01T00:00:00Z';
    for (const id of ['PAGE-003', 'PAGE-017']) {
      assert.equal((await patch(`locations/NL/ALL/${id}`, { name: `changed ${id}`, last_updated: '2022-06-01T00:00:00Z' })).body.status_code, 1000);
    }
    await call(hub, 'GET', '/ocpi/2.2.1/locations/NL/ALL/PAGE-017', { token: cpo.token });
    const first = await call<Json[]>(hub, 'GET', `/ocpi/2.2.1/locations?date_from=${syncTime}&limit=1`, { token: emsp.token });
    assert.match(first.headers['link'] ?? '', /date_from=2022-01-01T00%3A00%3A00\.000Z|date_from=2022-01-01T00:00:00\.000Z/);
    const changed = await followPages<Json>(hub, `/ocpi/2.2.1/locations?date_from=${syncTime}&limit=1`, emsp.token);
    assert.deepEqual(changed.items.map((l) => l['id']).sort(), ['PAGE-003', 'PAGE-017']);
    // date_to is exclusive.
    const before = await followPages<Json>(hub, '/ocpi/2.2.1/locations?date_from=2021-01-01T00:00:00Z&date_to=2021-01-01T00:00:05Z', emsp.token);
    assert.deepEqual(before.items.map((l) => l['id']).sort(), ['PAGE-000', 'PAGE-007', 'PAGE-010', 'PAGE-020']);

    // The order does not change while the partner pages: status PATCHes of locations it has already
    // fetched (each moving that location's last_updated) neither hide nor repeat any record.
    let patched = 0;
    const during = await followPages<Json>(hub, '/ocpi/2.2.1/locations?limit=4', emsp.token, async (page) => {
      for (const location of page.filter((l) => String(l['id']).startsWith('PAGE-'))) {
        const evseUid = String(((location['evses'] as Json[])[0] ?? {})['uid']);
        const res = await patch(`locations/NL/ALL/${String(location['id'])}/${evseUid}`, { status: 'CHARGING', last_updated: new Date().toISOString() });
        assert.equal(res.body.status_code, 1000);
        patched++;
      }
      await call(hub, 'GET', '/ocpi/2.2.1/locations/NL/ALL/PAGE-000', { token: cpo.token }); // the projection catches up
    });
    const duringIds = during.items.map((l) => `${String(l['country_code'])}/${String(l['party_id'])}/${String(l['id'])}`);
    assert.equal(patched, 23);
    const idsNow = (await followPages<Json>(hub, '/ocpi/2.2.1/locations?limit=4', emsp.token)).items.map((l) => `${String(l['country_code'])}/${String(l['party_id'])}/${String(l['id'])}`);
    assert.deepEqual(idsNow, ids, 'creation order survives every object changing');
    assert.deepEqual(duringIds, ids, 'the same records in the same order as a sync without changes');
  });

  it('bad pushes are refused with the right code and nothing is appended', async () => {
    const admin = stack.eventLog.topicAdmin();
    const size = async () => (await admin.topicOffsets(stack.eventLog.physical(topics.locations))).reduce((n, p) => n + Number(p.high), 0);
    const before = await size();
    const location = example('location_example.json');

    const foreign = await put('locations/XX/ABC/LOC1', { ...location, country_code: 'XX', party_id: 'ABC' });
    assert.equal(foreign.status, 403);
    const asEmsp = await put(locationPath(location), location, emsp.token);
    assert.equal(asEmsp.status, 403, 'an eMSP cannot push locations');
    const otherIds = await put('locations/BE/BEC/OTHER', location);
    assert.equal(otherIds.body.status_code, 2001);
    assert.match(otherIds.body.status_message ?? '', /id in the body/);
    const wrongType = await put(locationPath(location), { ...location, coordinates: 'somewhere' });
    assert.equal(wrongType.body.status_code, 2001);
    const unknownField = await put(locationPath(location), { ...location, secret_field: 1 });
    assert.match(unknownField.body.status_message ?? '', /unknown field "secret_field"/);
    const noLastUpdated = await patch(locationPath(location), { name: 'x' });
    assert.equal(noLastUpdated.body.status_code, 2001);
    assert.match(noLastUpdated.body.status_message ?? '', /last_updated/);
    const unknownLocation = await patch('locations/BE/BEC/NOPE', { name: 'x', last_updated: '2020-01-01T00:00:00Z' });
    assert.equal(unknownLocation.body.status_code, 2003);
    const unknownEvse = await patch('locations/BE/BEC/LOC1/NOPE', { status: 'AVAILABLE', last_updated: '2020-01-01T00:00:00Z' });
    assert.equal(unknownEvse.body.status_code, 2003);
    const evseIntoUnknown = await put('locations/BE/BEC/NOPE/3256', (location['evses'] as Json[])[0]);
    assert.equal(evseIntoUnknown.body.status_code, 2003);
    const malformed = await call(hub, 'PUT', `/ocpi/2.2.1/${locationPath(location)}`, { token: cpo.token, rawBody: '{"id": ' });
    assert.equal(malformed.status, 400);
    const badPath = await put('locations/BEL/BEC/LOC1', location);
    assert.equal(badPath.body.status_code, 2001);
    const tariffNoLastUpdated = await put('tariffs/DE/ALL/12', example('tariff_put_example.json'));
    assert.equal(tariffNoLastUpdated.body.status_code, 2001);

    assert.equal(await size(), before, 'no event appended for any refused push');
    await admin.close();
  });

  it('the projector survives SIGKILL mid-stream: after a restart the read model equals a clean replay', async () => {
    const base = example('location_example.json');
    const pushes: Array<Promise<unknown>> = [];
    for (let i = 0; i < 300; i++) {
      const id = `KILL-${i % 30}`;
      const body = i < 30 ? { ...base, id, last_updated: `2023-01-01T00:00:${String(i % 60).padStart(2, '0')}Z` } : { name: `n${i}`, last_updated: `2023-02-01T00:${String(Math.floor(i / 60)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z` };
      if (i === 30) await Promise.all(pushes.splice(0)); // locations exist before their PATCHes
      pushes.push(i < 30 ? put(`locations/BE/BEC/${id}`, body) : patch(`locations/BE/BEC/${id}`, body));
      if (i === 150) projector.child.kill('SIGKILL');
    }
    const results = (await Promise.all(pushes)) as Array<{ body: { status_code: number } }>;
    assert.ok(results.every((r) => r.body.status_code === 1000 || r.body.status_code === 3000), 'pushes accepted (or told to retry while the projector was down)');
    await projector.stop();
    projector = await startService('projector', env, /projector running/, 60_000);
    await call(hub, 'GET', '/ocpi/2.2.1/locations/BE/BEC/KILL-0', { token: cpo.token }); // waits for the catch-up

    // A clean replay of the same topics into an empty database.
    const replayDb = await createTestStack('locations_replay');
    const replay = await startService('projector', { ...env, DATABASE_URL: replayDb.databaseUrl, PROJECTOR_GROUP_ID: 'projector-replay' }, /projector running/, 60_000);
    try {
      const rows = async (s: TestStack) =>
        (await s.pool.query<{ k: string; d: string }>(`select country_code || '/' || party_id || '/' || id as k, document::text as d, created_at::text as c, last_updated::text as u from locations order by 1`)).rows;
      const deadline = Date.now() + 30_000;
      let a = await rows(stack);
      let b = await rows(replayDb);
      while (JSON.stringify(a) !== JSON.stringify(b) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 250));
        a = await rows(stack);
        b = await rows(replayDb);
      }
      assert.ok(a.length > 30);
      assert.deepEqual(b, a);
      // The empty read model was loaded from the snapshot topic first (docs/decisions/0014-snapshot-topics.md).
      assert.ok(replay.logs.some((l) => l.includes('read model loaded from its snapshot topic')), 'the fresh projector started from the snapshot');
      assert.ok(!projector.logs.some((l) => l.includes('could not seek')), 'the restarted projector resumed from its stored positions');
    } finally {
      await replay.stop();
      await replayDb.cleanup();
    }
  });

  it('hubctl rebuilds the read model from the topic while the old one serves, then switches over', async () => {
    const snapshot = async () =>
      (await stack.pool.query<{ k: string; d: string }>(
        `select country_code || '/' || party_id || '/' || id as k, document::text as d from locations
          where generation = (select active from read_model_generations where model = 'locations') order by 1`,
      )).rows;
    const before = await snapshot();
    const rebuild = hubctl(env, ['readmodel', 'rebuild', '--model', 'locations', '--json']);
    // Live traffic and reads go on during the rebuild.
    const during: number[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await patch('locations/BE/BEC/KILL-1', { name: `during rebuild ${i}`, last_updated: `2024-01-01T00:00:${String(i).padStart(2, '0')}Z` });
      during.push(res.body.status_code);
      during.push((await call(hub, 'GET', '/ocpi/2.2.1/locations?limit=5', { token: emsp.token })).body.status_code);
    }
    const out = await rebuild;
    assert.equal(out.code, 0, out.stderr);
    const result = JSON.parse(out.stdout) as { generation: number; rows: number; events: number };
    assert.equal(result.generation, 2);
    assert.ok(during.every((c) => c === 1000), `served throughout: ${during.join(',')}`);
    assert.match(out.stderr, /\[[#.]+\]\s+\d+% \d+\/\d+ events/, 'progress is shown');
    await call(hub, 'GET', '/ocpi/2.2.1/locations/BE/BEC/KILL-1', { token: cpo.token });
    const after = await snapshot();
    assert.equal(after.length, before.length);
    const changed = after.filter((row, i) => row.d !== before[i]?.d).map((r) => r.k);
    assert.deepEqual(changed, ['BE/BEC/KILL-1'], 'the rebuilt model equals the old one plus the live changes');
    assert.match(after.find((r) => r.k === 'BE/BEC/KILL-1')?.d ?? '', /during rebuild 19/);
    const { rows } = await stack.pool.query<{ n: string }>('select count(*) as n from locations where generation = 1');
    assert.equal(rows[0]?.n, '0', 'the old generation is dropped');
  });

  it('once retention has deleted the early changes (admin DeleteRecords), hubctl rebuilds from the snapshot topic plus the tail and equals the live read model', async () => {
    // docs/decisions/0014-snapshot-topics.md: every record of the change topic so far is deleted (as
    // retention would), then a few more changes make the tail the rebuild must still replay.
    const admin = stack.eventLog.topicAdmin();
    try {
      const physical = stack.eventLog.physical(topics.locations);
      const ends = await admin.topicOffsets(physical);
      await admin.deleteRecords(physical, ends.map((o) => ({ partition: o.partition, offset: o.high })));
      const starts = await admin.topicOffsets(physical);
      assert.ok(starts.every((o) => o.low === o.high), 'the change topic holds no record any more');
      assert.ok(starts.some((o) => Number(o.low) > 0));
    } finally {
      await admin.close();
    }
    for (let i = 0; i < 5; i++) {
      const res = await patch('locations/BE/BEC/KILL-2', { name: `tail ${i}`, last_updated: `2025-01-01T00:00:0${i}Z` });
      assert.equal(res.body.status_code, 1000, res.text);
    }
    await call(hub, 'GET', '/ocpi/2.2.1/locations/BE/BEC/KILL-2', { token: cpo.token }); // waits for the projection
    const live = await activeRows();
    const out = await hubctl(env, ['readmodel', 'rebuild', '--model', 'locations', '--json']);
    assert.equal(out.code, 0, out.stderr);
    const result = JSON.parse(out.stdout) as { generation: number; rows: number; snapshot_records: number };
    assert.ok(result.snapshot_records >= live.length, `loaded from the snapshot: ${out.stdout}`);
    const rebuilt = await activeRows();
    assert.equal(rebuilt.length, live.length);
    assert.deepEqual(rebuilt, live, 'documents, creation and update times as the live read model holds them');
    assert.match(rebuilt.find((r) => r.k === 'BE/BEC/KILL-2')?.d ?? '', /tail 4/);
  });

  it('a read model that predates its snapshot topic: hubctl readmodel snapshot fills it while CPOs push, and after retention the rebuild still equals the live read model', async () => {
    // docs/decisions/0014-snapshot-topics.md: an existing deployment has history but no snapshot. The
    // snapshot topic is made empty again (deleted and created anew while the projector is stopped);
    // only objects changed afterwards reach it through the projector.
    const admin = stack.eventLog.topicAdmin();
    try {
      await projector.stop();
      const snapshotTopic = stack.eventLog.physical(topics.locationsSnapshot);
      await admin.deleteTopics([snapshotTopic], { timeoutMs: 30_000 });
      for (const giveUpAt = Date.now() + 30_000; (await admin.listTopics()).includes(snapshotTopic) && Date.now() < giveUpAt; ) await new Promise((r) => setTimeout(r, 200));
      for (const giveUpAt = Date.now() + 30_000; ; ) {
        try {
          await ensureTopics(admin, topicDefinitions(), stack.topicPrefix);
          break;
        } catch (e) {
          // The deletion may still be under way on a broker (TOPIC_ALREADY_EXISTS, retriable).
          if (Date.now() >= giveUpAt) throw e;
          await new Promise((r) => setTimeout(r, 500));
        }
      }
      projector = await startService('projector', env, /projector running/, 60_000);

      // The fill runs while the CPO goes on changing locations.
      const fill = hubctl(env, ['readmodel', 'snapshot', '--model', 'locations', '--json']);
      for (let i = 0; i < 20; i++) {
        const res = await patch(`locations/BE/BEC/KILL-${i % 10}`, { name: `during fill ${i}`, last_updated: `2025-02-01T00:00:${String(i).padStart(2, '0')}Z` });
        assert.equal(res.body.status_code, 1000, res.text);
      }
      const filled = await fill;
      assert.equal(filled.code, 0, filled.stderr);
      const written = JSON.parse(filled.stdout) as { objects: number };

      // Retention deletes every change so far; a few changes after it make the tail.
      const physical = stack.eventLog.physical(topics.locations);
      const ends = await admin.topicOffsets(physical);
      await admin.deleteRecords(physical, ends.map((o) => ({ partition: o.partition, offset: o.high })));
      for (let i = 0; i < 3; i++) assert.equal((await patch('locations/BE/BEC/KILL-3', { name: `after fill ${i}`, last_updated: `2025-03-01T00:00:0${i}Z` })).body.status_code, 1000);
      await call(hub, 'GET', '/ocpi/2.2.1/locations/BE/BEC/KILL-3', { token: cpo.token }); // waits for the projection
      const live = await activeRows();
      assert.ok(written.objects >= live.length, `every live location written: ${filled.stdout}`);
      const out = await hubctl(env, ['readmodel', 'rebuild', '--model', 'locations', '--json']);
      assert.equal(out.code, 0, out.stderr);
      const rebuilt = await activeRows();
      assert.equal(rebuilt.length, live.length, 'no location is missing from the rebuilt read model');
      assert.deepEqual(rebuilt, live, 'documents, creation and update times as the live read model holds them');
      assert.match(rebuilt.find((r) => r.k === 'BE/BEC/KILL-3')?.d ?? '', /after fill 2/);
    } finally {
      await admin.close();
    }
  });

  it('location list requests are limited per party across ingress replicas (HTTP 429 + Retry-After)', async () => {
    const limited = { ...env, RATE_LIMIT_LOCATION_LISTS: '5' };
    const ports = [await freePort(), await freePort()];
    const replicas = await Promise.all(ports.map((p) => startService('ingress', { ...limited, HUB_PORT: String(p), OPERATOR_PORT: '0' }, /ingress listening/)));
    const fresh = await onboard(hub, env, 'Rate-limited eMSP', [{ role: 'EMSP', countryCode: 'FR', partyId: 'RAT' }]);
    try {
      // Start on a fresh minute window so the count is not split across two windows.
      const toNextMinute = 60_000 - (Date.now() % 60_000);
      if (toNextMinute < 5_000) await new Promise((r) => setTimeout(r, toNextMinute + 100));
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const res = await call(`http://127.0.0.1:${ports[i % 2]}`, 'GET', '/ocpi/2.2.1/locations?limit=1', { token: fresh.token });
        statuses.push(res.status);
        if (res.status === 429) {
          assert.equal(res.body.status_code, 2000);
          assert.ok(Number(res.headers['retry-after']) >= 1 && Number(res.headers['retry-after']) <= 60);
        }
      }
      assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429]);
      // Tariff lists are not limited by this rule.
      assert.equal((await call(`http://127.0.0.1:${ports[0]}`, 'GET', '/ocpi/2.2.1/tariffs', { token: outsider.token })).status, 200);
    } finally {
      await Promise.all(replicas.map((r) => r.stop()));
      await fresh.partner.close();
    }
  });
});
