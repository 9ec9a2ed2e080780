// Tokens pushed by an eMSP and pulled by CPOs (mod_tokens.asciidoc, Receiver interface PUT
// and PATCH, Sender interface GET): the eMSP pushes the OCPI examples and more, two of them sharing a
// uid with different types, PATCHes one; the projector builds the tokens read model; a routed CPO pulls
// every token once by following Link headers, a CPO routed to another eMSP only, none of them. Real
// ingress and projector processes, real Kafka and Postgres.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, createTestStack, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { followPages, freePort, hubctl, ocpiExample, onboard, type OnboardedPlatform } from './helpers.ts';

type Json = Record<string, unknown>;
const keyOf = (t: Json) => `${String(t['uid'])}|${String(t['type'])}`;

describe('tokens: eMSP push, project, CPO pull', () => {
  let stack: TestStack;
  let ingress: ServiceProcess;
  let projector: ServiceProcess;
  let hub: string;
  let env: Record<string, string>;
  let emsp: OnboardedPlatform; // NL/TNM, the examples' eMSP
  let otherEmsp: OnboardedPlatform; // DE/EMO
  let routedCpo: OnboardedPlatform; // BE/BEC, routed to NL/TNM
  let otherCpo: OnboardedPlatform; // NL/OTH, routed to DE/EMO only

  const rfid = ocpiExample('token_put_example.json'); // NL/TNM 012345678, RFID
  const appUser = { ...rfid, type: 'APP_USER', contract_id: 'NL8ACC12E46L90', whitelist: 'ALLOWED' }; // same uid, other type
  const more = [3, 4, 5].map((n) => ({ ...rfid, uid: `TNM-000${n}`, contract_id: `NL8ACC12E46L9${n}` }));
  const patch = ocpiExample('token_patch_example.json'); // valid false, last_updated 2019-06-19T02:11:11Z

  before(async () => {
    stack = await createTestStack('tokens-pull');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1' });
    ingress = await startService('ingress', env, /ingress listening/);
    projector = await startService('projector', env, /projector running/, 60_000);
    emsp = await onboard(hub, env, 'eMSP', [{ role: 'EMSP', countryCode: 'NL', partyId: 'TNM' }]);
    otherEmsp = await onboard(hub, env, 'Other eMSP', [{ role: 'EMSP', countryCode: 'DE', partyId: 'EMO' }]);
    routedCpo = await onboard(hub, env, 'CPO', [{ role: 'CPO', countryCode: 'BE', partyId: 'BEC' }]);
    otherCpo = await onboard(hub, env, 'Other CPO', [{ role: 'CPO', countryCode: 'NL', partyId: 'OTH' }]);
    assert.equal((await hubctl(env, ['routing', 'enable', '--emsp', 'NL/TNM', '--cpo', 'BE/BEC'])).code, 0);
    assert.equal((await hubctl(env, ['routing', 'enable', '--emsp', 'DE/EMO', '--cpo', 'NL/OTH'])).code, 0);
  });

  after(async () => {
    await Promise.allSettled([ingress?.stop(), projector?.stop(), emsp?.partner.close(), otherEmsp?.partner.close(), routedCpo?.partner.close(), otherCpo?.partner.close()]);
    await stack?.cleanup();
  });

  const push = async (method: 'PUT' | 'PATCH', path: string, body: Json, token = emsp.token) => {
    const res = await call(hub, method, `/ocpi/2.2.1/tokens/${path}`, { token, body });
    assert.equal(res.body.status_code, 1000, `${method} ${path}: ${res.text}`);
  };

  it('a routed CPO pulls every token of the eMSP exactly once, by uid and type, with the PATCH applied', async () => {
    await push('PUT', 'NL/TNM/012345678', rfid); // ?type= omitted: RFID
    await push('PUT', 'NL/TNM/012345678?type=APP_USER', appUser);
    for (const t of more) await push('PUT', `NL/TNM/${String(t['uid'])}?type=RFID`, t);
    await push('PATCH', 'NL/TNM/012345678?type=APP_USER', patch);
    await push('PUT', 'DE/EMO/EMO-1', { ...rfid, country_code: 'DE', party_id: 'EMO', uid: 'EMO-1' }, otherEmsp.token);

    // The owner reads its own writes by uid and ?type= (the detail GET waits for the projection).
    const patched = await call<Json>(hub, 'GET', '/ocpi/2.2.1/tokens/NL/TNM/012345678?type=APP_USER', { token: emsp.token });
    assert.deepEqual(patched.body.data, { ...appUser, ...patch });
    const plain = await call<Json>(hub, 'GET', '/ocpi/2.2.1/tokens/NL/TNM/012345678', { token: emsp.token });
    assert.deepEqual(plain.body.data, rfid);

    const expected = new Map<string, Json>([rfid, { ...appUser, ...patch }, ...more].map((t) => [keyOf(t), t]));
    const pulled = await followPages<Json>(hub, '/ocpi/2.2.1/tokens?limit=2', routedCpo.token);
    assert.equal(pulled.pages, 3, 'five tokens by two');
    assert.deepEqual(pulled.totals, ['5', '5', '5']);
    assert.deepEqual(pulled.items.map(keyOf).sort(), [...expected.keys()].sort(), 'every token exactly once');
    for (const t of pulled.items) assert.deepEqual(t, expected.get(keyOf(t)), keyOf(t));

    // date_from (inclusive) on last_updated: only the PATCHed token changed since 2019.
    const changed = await followPages<Json>(hub, '/ocpi/2.2.1/tokens?date_from=2019-01-01T00:00:00Z', routedCpo.token);
    assert.deepEqual(changed.items.map(keyOf), ['012345678|APP_USER']);

    // A routed CPO reads one token too; the type decides which.
    const detail = await call<Json>(hub, 'GET', '/ocpi/2.2.1/tokens/NL/TNM/012345678?type=APP_USER', { token: routedCpo.token });
    assert.equal(detail.body.data?.['valid'], false);
  });

  it('a CPO without a routing rule to the eMSP pulls none of its tokens, only those of the eMSP it is routed to', async () => {
    const pulled = await followPages<Json>(hub, '/ocpi/2.2.1/tokens', otherCpo.token);
    assert.deepEqual(pulled.items.map((t) => `${String(t['country_code'])}/${String(t['party_id'])}/${keyOf(t)}`), ['DE/EMO/EMO-1|RFID']);
    const detail = await call(hub, 'GET', '/ocpi/2.2.1/tokens/NL/TNM/012345678', { token: otherCpo.token });
    assert.equal(detail.status, 404);
    assert.equal(detail.body.status_code, 2000);
  });
});
