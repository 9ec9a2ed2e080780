// Locations and tariffs across versions (mod_locations.md and mod_tariffs.md, 2.1.1; docs/reference/
// version-mapping.md): a 2.1.1 CPO pushes the 2.1.1 examples and a 2.2.1 eMSP pulls them as valid 2.2.1
// objects; a 2.2.1 CPO pushes and a 2.1.1 eMSP pulls valid 2.1.1 objects; what a 2.1.1 CPO sent comes
// back to 2.1.1 readers as it was sent. Real ingress and projector processes, real Kafka and Postgres.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { call, createTestStack, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { assertValid, example211, followPages, freePort, hubctl, onboard, onboard211, type OnboardedPlatform } from './helpers.ts';

type Json = Record<string, unknown>;
const examples221 = new URL('../../shared/ocpi-2.2.1/examples/', import.meta.url);
const example221 = (name: string) => JSON.parse(readFileSync(new URL(name, examples221), 'utf8')) as Json;

describe('OCPI 2.1.1 locations and tariffs beside 2.2.1', () => {
  let stack: TestStack;
  let ingress: ServiceProcess;
  let projector: ServiceProcess;
  let hub: string;
  let env: Record<string, string>;
  let cpo211: OnboardedPlatform;
  let cpo221: OnboardedPlatform;
  let emsp211: OnboardedPlatform;
  let emsp221: OnboardedPlatform;
  const location211 = example211('mod_locations.md', '### 3.1 _Location_ Object');
  const tariff211 = example211('mod_tariffs.md', '### 3.1 _Tariff_ Object');

  before(async () => {
    stack = await createTestStack('ocpi211-locations');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', PAGE_LIMIT_MAX: '50' });
    ingress = await startService('ingress', env, /ingress listening/);
    projector = await startService('projector', env, /projector running/);
    cpo211 = await onboard211(hub, env, 'Old CPO', { role: 'CPO', countryCode: 'BE', partyId: 'BEC' });
    emsp211 = await onboard211(hub, env, 'Old eMSP', { role: 'EMSP', countryCode: 'NL', partyId: 'OLD' });
    cpo221 = await onboard(hub, env, 'New CPO', [{ role: 'CPO', countryCode: 'NL', partyId: 'NEW' }]);
    emsp221 = await onboard(hub, env, 'New eMSP', [{ role: 'EMSP', countryCode: 'DE', partyId: 'NEW' }]);
    for (const [e, c] of [['NL/OLD', 'BE/BEC'], ['NL/OLD', 'NL/NEW'], ['DE/NEW', 'BE/BEC'], ['DE/NEW', 'NL/NEW']]) {
      const out = await hubctl(env, ['routing', 'enable', '--emsp', e ?? '', '--cpo', c ?? '']);
      assert.equal(out.code, 0, out.stderr);
    }
  });

  after(async () => {
    await Promise.allSettled([ingress?.stop(), projector?.stop(), cpo211?.partner.close(), cpo221?.partner.close(), emsp211?.partner.close(), emsp221?.partner.close()]);
    await stack?.cleanup();
  });

  const v211 = (path: string) => `/ocpi/2.1.1/${path}`;
  const v221 = (path: string) => `/ocpi/2.2.1/${path}`;

  it('a 2.1.1 CPO pushes the 2.1.1 Location example (no country_code or party_id: they come from its credentials)', async () => {
    await assertValid('ocpi-2.1.1/location.json', location211);
    const res = await call(hub, 'PUT', v211(`locations/BE/BEC/${String(location211['id'])}`), { token: cpo211.token, body: location211 });
    assert.equal(res.body.status_code, 1000, res.text);
  });

  it('a 2.1.1 CPO PATCHes an EVSE status without last_updated (2.1.1 does not require it), and a connector tariff_id', async () => {
    const evse = await call(hub, 'PATCH', v211(`locations/BE/BEC/${String(location211['id'])}/3256`), { token: cpo211.token, body: { status: 'CHARGING' } });
    assert.equal(evse.body.status_code, 1000, evse.text);
    const connector = await call(hub, 'PATCH', v211(`locations/BE/BEC/${String(location211['id'])}/3257/1`), { token: cpo211.token, body: { tariff_id: '13', last_updated: '2025-01-01T00:00:00Z' } });
    assert.equal(connector.body.status_code, 1000, connector.text);
  });

  it('2001 in 2.1.1 terms for a body that breaks the 2.1.1 schema', async () => {
    const res = await call(hub, 'PUT', v211('locations/BE/BEC/BAD'), { token: cpo211.token, body: { ...location211, id: 'BAD', type: 'NOWHERE' } });
    assert.equal(res.body.status_code, 2001);
    assert.match(String(res.body.status_message), /type/);
  });

  it('a 2.1.1 CPO pushes the 2.1.1 Tariff example', async () => {
    await assertValid('ocpi-2.1.1/tariff.json', tariff211);
    const res = await call(hub, 'PUT', v211(`tariffs/BE/BEC/${String(tariff211['id'])}`), { token: cpo211.token, body: tariff211 });
    assert.equal(res.body.status_code, 1000, res.text);
  });

  it('a 2.2.1 CPO pushes the 2.2.1 Location and Tariff examples', async () => {
    const location: Json = { ...example221('location_example_parking_garage_opening_hours.json'), country_code: 'NL', party_id: 'NEW' };
    const res = await call(hub, 'PUT', v221(`locations/NL/NEW/${String(location['id'])}`), { token: cpo221.token, body: location });
    assert.equal(res.body.status_code, 1000, res.text);
    const tariff: Json = { ...example221('tariff_13_simple_3hour_5parking.json'), country_code: 'NL', party_id: 'NEW' };
    const t = await call(hub, 'PUT', v221(`tariffs/NL/NEW/${String(tariff['id'])}`), { token: cpo221.token, body: tariff });
    assert.equal(t.body.status_code, 1000, t.text);
  });

  it('a 2.2.1 eMSP pulls both CPOs as valid 2.2.1 objects, the 2.1.1 one with its owner and tariff_ids, never the hub-private member', async () => {
    // Both locations, and the 2.1.1 CPO's PATCHes applied (its connector's tariff last): the eMSP's pull
    // sees them once their projection has caught up (docs/reference/partner-api.md, Read-your-writes).
    const patched = (ls: Json[]) => ls.some((l) => JSON.stringify(l['evses'] ?? []).includes('"tariff_ids":["13"]'));
    let pulled: Json[] = [];
    for (let i = 0; i < 50 && !(pulled.length === 2 && patched(pulled)); i++) {
      pulled = (await followPages<Json>(hub, v221('locations'), emsp221.token)).items;
      if (!(pulled.length === 2 && patched(pulled))) await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(pulled.length, 2);
    for (const l of pulled) {
      await assertValid('ocpi/location.json', l);
      assert.ok(!('hub_version_fields' in l), 'the hub-private member never reaches a 2.2.1 reader');
    }
    const fromOld = pulled.find((l) => l['party_id'] === 'BEC') as Json;
    assert.equal(fromOld['country_code'], 'BE');
    const evses = fromOld['evses'] as Json[];
    assert.equal(evses.find((e) => e['uid'] === '3256')?.['status'], 'CHARGING');
    const connector = ((evses.find((e) => e['uid'] === '3257')?.['connectors'] as Json[]) ?? [])[0] ?? {};
    assert.deepEqual(connector['tariff_ids'], ['13']);
    // Read-your-writes is the owner's (docs/reference/partner-api.md, Read-your-writes); another party's pull sees the
    // tariffs once their projection has caught up, so it asks again for a while, as for the locations.
    let tariffs: Json[] = [];
    for (let i = 0; i < 50 && tariffs.length < 2; i++) {
      tariffs = (await followPages<Json>(hub, v221('tariffs'), emsp221.token)).items;
      if (tariffs.length < 2) await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(tariffs.length, 2);
    for (const t of tariffs) await assertValid('ocpi/tariff.json', t);
  });

  it('a 2.1.1 eMSP pulls both CPOs as valid 2.1.1 objects, paginated with Link, X-Total-Count and X-Limit', async () => {
    const first = await call<Json[]>(hub, 'GET', v211('locations?limit=1'), { token: emsp211.token });
    assert.equal(first.body.status_code, 1000, first.text);
    assert.equal(first.headers['x-total-count'], '2');
    assert.equal(first.headers['x-limit'], '1');
    assert.match(String(first.headers['link']), /^<http:\/\/127\.0\.0\.1:\d+\/ocpi\/2\.1\.1\/locations\?offset=1&limit=1>; rel="next"$/);
    const pulled = (await followPages<Json>(hub, v211('locations?limit=1'), emsp211.token)).items;
    assert.equal(pulled.length, 2);
    for (const l of pulled) await assertValid('ocpi-2.1.1/location.json', l);
    // What the 2.1.1 CPO sent comes back as it was sent, but for the updates since.
    const fromOld = pulled.find((l) => l['id'] === location211['id']) as Json;
    assert.equal(fromOld['type'], location211['type']);
    assert.ok(!('country_code' in fromOld) && !('publish' in fromOld), '2.1.1 has no such fields');
    const connector = (((fromOld['evses'] as Json[]).find((e) => e['uid'] === '3257')?.['connectors'] as Json[]) ?? [])[0] ?? {};
    assert.equal(connector['tariff_id'], '13');
    const tariffs = (await followPages<Json>(hub, v211('tariffs'), emsp211.token)).items;
    assert.equal(tariffs.length, 2);
    for (const t of tariffs) await assertValid('ocpi-2.1.1/tariff.json', t);
    const oldTariff = tariffs.find((t) => t['id'] === tariff211['id']) as Json;
    assert.deepEqual(oldTariff['elements'], tariff211['elements']);
  });

  it('the 2.1.1 CPO reads its own Location back in 2.1.1; a 2.2.1-only party gets 404 on 2.1.1 URLs', async () => {
    const own = await call<Json>(hub, 'GET', v211(`locations/BE/BEC/${String(location211['id'])}`), { token: cpo211.token });
    assert.equal(own.body.status_code, 1000, own.text);
    await assertValid('ocpi-2.1.1/location.json', own.body.data);
    const refused = await call(hub, 'GET', v211('locations'), { token: emsp221.token });
    assert.equal(refused.status, 404);
    assert.equal(refused.body.status_code, 2000);
  });
});
