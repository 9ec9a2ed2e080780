// Tariffs across OCPI 2.3.0, 2.2.1 and 2.1.1 (ocpi-2.3.0/mod_tariffs.asciidoc; docs/reference/
// version-mapping.md, OCPI 2.3.0, Prices and taxes): a 2.3.0 CPO pushes the 2.3.0 Tariff examples;
// 2.2.1 and 2.1.1 eMSPs pull them valid in their version, prices excl. VAT, without the tariff whose
// prices include taxes at no given rate (tariff_20), and with X-Total-Count and every page agreeing;
// a 2.3.0 eMSP pulls them as sent; a 2.2.1 CPO's tariff reaches a 2.3.0 eMSP saying tax_included NO.
// Real ingress and projector processes, real Kafka and Postgres.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { call, createTestStack, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { assertValid, example211, example230, followPages, freePort, ocpi230Examples, ocpiExample, onboard, onboard211, onboard230, routeEvery, until, type OnboardedPlatform } from './helpers.ts';

type Json = Record<string, unknown>;
const examples = ocpi230Examples;

describe('OCPI 2.3.0 tariffs beside 2.2.1 and 2.1.1', () => {
  let stack: TestStack;
  let services: ServiceProcess[] = [];
  let hub: string;
  let env: Record<string, string>;
  let cpo230: OnboardedPlatform;
  let cpo221: OnboardedPlatform;
  let emsp230: OnboardedPlatform;
  let emsp221: OnboardedPlatform;
  let emsp211: OnboardedPlatform;
  let cpo211: OnboardedPlatform;
  // Every numbered 2.3.0 Tariff example, each under its own id and the 2.3.0 CPO's party.
  const files = readdirSync(examples).filter((f) => /^tariff_\d+_/.test(f)).sort();
  const tariffs: Json[] = files.map((f) => ({ ...example230(f), country_code: 'BE', party_id: 'BEC', id: f.replace(/\.json$/, '').slice(0, 36) }));
  const inclusive = tariffs.find((t) => String(t['id']).startsWith('tariff_20_')) as Json;
  // tax_included YES with a vat on every component: a 2.2.1 reader gets the price without the VAT.
  const withVat: Json = { country_code: 'BE', party_id: 'BEC', id: 'incl-vat', currency: 'EUR', tax_included: 'YES', elements: [{ price_components: [{ type: 'ENERGY', price: 0.242, vat: 21, step_size: 1 }] }], last_updated: '2026-01-01T00:00:00Z' };
  const all = [...tariffs, withVat];

  before(async () => {
    stack = await createTestStack('ocpi230-tariffs');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1' });
    services = await Promise.all([startService('ingress', env, /ingress listening/), startService('projector', env, /projector running/)]);
    cpo230 = await onboard230(hub, env, 'CPO 2.3.0', { role: 'CPO', countryCode: 'BE', partyId: 'BEC' });
    cpo221 = await onboard(hub, env, 'CPO 2.2.1', [{ role: 'CPO', countryCode: 'NL', partyId: 'NEW' }]);
    emsp230 = await onboard230(hub, env, 'eMSP 2.3.0', { role: 'EMSP', countryCode: 'NL', partyId: 'TST' });
    emsp221 = await onboard(hub, env, 'eMSP 2.2.1', [{ role: 'EMSP', countryCode: 'DE', partyId: 'NEW' }]);
    emsp211 = await onboard211(hub, env, 'eMSP 2.1.1', { role: 'EMSP', countryCode: 'FR', partyId: 'OLD' });
    cpo211 = await onboard211(hub, env, 'CPO 2.1.1', { role: 'CPO', countryCode: 'IT', partyId: 'OLC' });
    await routeEvery(env, ['NL/TST', 'DE/NEW', 'FR/OLD'], ['BE/BEC', 'NL/NEW']);
    await routeEvery(env, ['NL/TST'], ['IT/OLC']);
  });

  after(async () => {
    await Promise.allSettled([...services.map((s) => s.stop()), ...[cpo230, cpo221, emsp230, emsp221, emsp211, cpo211].map((p) => p?.partner.close())]);
    await stack?.cleanup();
  });

  it('a 2.3.0 CPO PUTs every numbered 2.3.0 Tariff example (and one tax-inclusive with vat)', async () => {
    assert.ok(tariffs.length >= 15 && inclusive, 'the examples are there, tariff_20 among them');
    for (const tariff of all) {
      await assertValid('ocpi-2.3.0/tariff.json', tariff);
      const res = await call(hub, 'PUT', `/ocpi/2.3.0/tariffs/BE/BEC/${String(tariff['id'])}`, { token: cpo230.token, body: tariff });
      assert.equal(res.body.status_code, 1000, `${String(tariff['id'])}: ${res.text}`);
    }
  });

  /** Every page of a pull once all are projected (the 2.3.0 list has them all). */
  const pullAll = async (version: string, token: string, limit: number) => {
    await until('every tariff projected', async () => (await followPages<Json>(hub, '/ocpi/2.3.0/tariffs?limit=100', emsp230.token)).items.length >= all.length);
    return followPages<Json>(hub, `/ocpi/${version}/tariffs?limit=${limit}`, token);
  };

  it('a 2.3.0 eMSP pulls them all as sent, tariff_20 included', async () => {
    const { items, totals } = await pullAll('2.3.0', emsp230.token, 4);
    assert.equal(items.length, all.length);
    assert.ok(totals.every((t) => t === String(all.length)), totals.join());
    for (const t of items) await assertValid('ocpi-2.3.0/tariff.json', t);
    assert.deepEqual(items.find((t) => t['id'] === inclusive['id']), inclusive);
    assert.deepEqual(items.find((t) => t['id'] === 'incl-vat'), withVat);
  });

  for (const [version, schema] of [['2.2.1', 'ocpi/tariff.json'], ['2.1.1', 'ocpi-2.1.1/tariff.json']] as const) {
    it(`a ${version} eMSP pulls every page without tariff_20, X-Total-Count counting what it gets; prices excl. VAT`, async () => {
      const emsp = version === '2.2.1' ? emsp221 : emsp211;
      const { items, totals, pages } = await pullAll(version, emsp.token, 4);
      assert.equal(items.length, all.length - 1);
      assert.ok(!items.some((t) => t['id'] === inclusive['id']), 'no tax-inclusive prices as excl. VAT ones');
      assert.ok(totals.every((t) => t === String(all.length - 1)), `X-Total-Count ${totals.join()} for ${items.length}`);
      assert.equal(pages, Math.ceil((all.length - 1) / 4));
      assert.equal(new Set(items.map((t) => t['id'])).size, items.length, 'no tariff twice');
      for (const t of items) await assertValid(schema, t);
      const vat = items.find((t) => t['id'] === 'incl-vat') as { elements: Array<{ price_components: Array<{ price: number }> }> };
      assert.equal(vat.elements[0]?.price_components[0]?.price, 0.2);
    });
  }

  it('one tariff by its ids: tariff_20 is unknown to a 2.2.1 eMSP (as a tariff that does not exist), known to a 2.3.0 one', async () => {
    const path = `tariffs/BE/BEC/${String(inclusive['id'])}`;
    const old = await call(hub, 'GET', `/ocpi/2.2.1/${path}`, { token: emsp221.token });
    const none = await call(hub, 'GET', '/ocpi/2.2.1/tariffs/BE/BEC/NOPE', { token: emsp221.token });
    assert.equal(old.status, 404, old.text);
    assert.deepEqual([old.status, old.body.status_code], [none.status, none.body.status_code]);
    const ok = await call<Json>(hub, 'GET', `/ocpi/2.3.0/${path}`, { token: emsp230.token });
    assert.equal(ok.body.status_code, 1000, ok.text);
    assert.deepEqual(ok.body.data, inclusive);
  });

  it("a 2.2.1 CPO's tariff reaches a 2.3.0 eMSP as a valid 2.3.0 Tariff saying tax_included NO", async () => {
    const tariff: Json = { ...ocpiExample('tariff_1_simple_2hour.json'), country_code: 'NL', party_id: 'NEW' };
    assert.equal((await call(hub, 'PUT', `/ocpi/2.2.1/tariffs/NL/NEW/${String(tariff['id'])}`, { token: cpo221.token, body: tariff })).body.status_code, 1000);
    const seen = await until('the 2.2.1 tariff in a 2.3.0 pull', async () => (await followPages<Json>(hub, '/ocpi/2.3.0/tariffs?limit=100', emsp230.token)).items.find((t) => t['party_id'] === 'NEW'));
    await assertValid('ocpi-2.3.0/tariff.json', seen);
    assert.equal(seen['tax_included'], 'NO');
  });

  it("a 2.1.1 CPO's tariff reaches a 2.3.0 eMSP as a valid 2.3.0 Tariff saying tax_included NO", async () => {
    // mod_tariffs.md 3.1 (2.1.1): no country_code or party_id (the hub takes the CPO's); prices excl. VAT.
    const tariff = example211('mod_tariffs.md', '### 3.1 _Tariff_ Object');
    assert.equal((await call(hub, 'PUT', `/ocpi/2.1.1/tariffs/IT/OLC/${String(tariff['id'])}`, { token: cpo211.token, body: tariff })).body.status_code, 1000);
    const seen = await until('the 2.1.1 tariff in a 2.3.0 pull', async () => (await followPages<Json>(hub, '/ocpi/2.3.0/tariffs?limit=100', emsp230.token)).items.find((t) => t['party_id'] === 'OLC'));
    await assertValid('ocpi-2.3.0/tariff.json', seen);
    assert.deepEqual([seen['country_code'], seen['tax_included']], ['IT', 'NO']);
  });

  it('the 2.3.0 CPO deletes tariff_20; a 2.3.0 tariff without tax_included is refused (2001); a 2.2.1 caller cannot use the 2.3.0 URL', async () => {
    const gone = await call(hub, 'DELETE', `/ocpi/2.3.0/tariffs/BE/BEC/${String(inclusive['id'])}`, { token: cpo230.token });
    assert.equal(gone.body.status_code, 1000, gone.text);
    const { tax_included: _dropped, ...untaxed } = withVat;
    const refused = await call(hub, 'PUT', '/ocpi/2.3.0/tariffs/BE/BEC/untaxed', { token: cpo230.token, body: { ...untaxed, id: 'untaxed' } });
    assert.equal(refused.body.status_code, 2001, refused.text);
    const foreign = await call(hub, 'GET', '/ocpi/2.3.0/tariffs', { token: emsp221.token });
    assert.equal(foreign.status, 404);
  });
});
