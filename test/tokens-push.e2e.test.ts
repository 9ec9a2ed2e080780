// Token push from an eMSP to the CPOs routed to it (mod_tokens.asciidoc,
// Receiver interface; transport_and_format.asciidoc, Message Routing and Broadcast Push). Real ingress,
// projector and dispatcher processes, real Kafka and Postgres, the CPOs real HTTP servers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, createTestStack, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { followPages, freePort, hubctl, ocpiExample, onboard, until, type OnboardedPlatform } from './helpers.ts';

type Json = Record<string, unknown>;
const TOKENS = 1000;

describe('token push: an eMSP pushes, every routed CPO receives', () => {
  let stack: TestStack;
  let services: ServiceProcess[] = [];
  let hub: string;
  let env: Record<string, string>;
  let emsp: OnboardedPlatform; // NL/EMP
  const cpos: OnboardedPlatform[] = []; // BE/CP1..CP3, routed
  let unrouted: OnboardedPlatform; // BE/CP4
  const cpoModules = [
    { identifier: 'credentials', role: 'SENDER' as const },
    { identifier: 'tokens', role: 'RECEIVER' as const },
  ];
  const token = (uid: string, extra: Json = {}): Json => ({ ...ocpiExample('token_put_example.json'), country_code: 'NL', party_id: 'EMP', uid, type: 'RFID', last_updated: new Date().toISOString(), ...extra });
  const putToken = (body: Json, headers: Record<string, string> = {}) =>
    call(hub, 'PUT', `/ocpi/2.2.1/tokens/NL/EMP/${encodeURIComponent(String(body['uid']))}?type=${String(body['type'])}`, { token: emsp.token, body, headers });
  const tokensAt = (p: OnboardedPlatform, uid?: string) => p.partner.received.filter((r) => r.kind === 'token' && (uid === undefined || r.body['uid'] === uid));

  before(async () => {
    stack = await createTestStack('tokens_push');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({
      HUB_PORT: String(port),
      ALLOW_HTTP_PARTNER_URLS: 'true',
      PARTNER_ALLOWED_HOSTS: '127.0.0.1',
      DELIVERY_RETRY_SCHEDULE_MS: '200,400,600,800,1000,1000,1000,1000,1000,1000,1000,1000',
      DELIVERY_TIMEOUT_MS: '1000',
    });
    services = [
      await startService('ingress', env, /ingress listening/),
      await startService('projector', env, /projector running/, 60_000),
      await startService('dispatcher', env, /dispatcher running/, 60_000),
    ];
    emsp = await onboard(hub, env, 'eMSP', [{ role: 'EMSP', countryCode: 'NL', partyId: 'EMP' }]);
    for (const partyId of ['CP1', 'CP2', 'CP3']) {
      cpos.push(await onboard(hub, env, partyId, [{ role: 'CPO', countryCode: 'BE', partyId }], cpoModules));
      assert.equal((await hubctl(env, ['routing', 'enable', '--emsp', 'NL/EMP', '--cpo', `BE/${partyId}`])).code, 0);
    }
    unrouted = await onboard(hub, env, 'CP4', [{ role: 'CPO', countryCode: 'BE', partyId: 'CP4' }], cpoModules);
  });

  after(async () => {
    await Promise.allSettled([...services.map((s) => s.stop()), ...[emsp, unrouted, ...cpos].map((p) => p?.partner.close())]);
    await stack?.cleanup();
  });

  it(`delivers ${TOKENS} tokens to each of 3 routed CPOs, none to an unrouted one, and a routed CPO pulls the same list`, async () => {
    let next = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < TOKENS) {
          const uid = `BULK${String(next++).padStart(4, '0')}`;
          const res = await putToken(token(uid));
          assert.equal(res.body.status_code, 1000, res.text);
        }
      }),
    );
    for (const cpo of cpos) {
      await until(`${TOKENS} tokens at ${cpo.partner.baseUrl}`, () => new Set(tokensAt(cpo).map((r) => r.body['uid'])).size >= TOKENS, 120_000);
    }
    const first = tokensAt(cpos[0] as OnboardedPlatform, 'BULK0000')[0];
    // mod_tokens.asciidoc, Receiver interface: PUT {url}/{country_code}/{party_id}/{token_uid}[?type=], from the eMSP to the CPO.
    assert.equal(first?.url, '/ocpi/2.2.1/tokens/NL/EMP/BULK0000?type=RFID');
    assert.equal(first?.headers['ocpi-from-country-code'], 'NL');
    assert.equal(first?.headers['ocpi-from-party-id'], 'EMP');
    assert.equal(first?.headers['ocpi-to-party-id'], 'CP1');
    assert.equal(first?.body['contract_id'], ocpiExample('token_put_example.json')['contract_id']);
    assert.deepEqual(tokensAt(unrouted), []);

    const pulled = await until('every token in the read model', async () => {
      const page = await followPages<Json>(hub, '/ocpi/2.2.1/tokens?limit=250', (cpos[1] as OnboardedPlatform).token);
      return page.items.length >= TOKENS && page;
    }, 60_000);
    assert.equal(pulled.items.length, TOKENS);
    assert.equal(new Set(pulled.items.map((t) => t['uid'])).size, TOKENS);
    assert.equal(pulled.pages, 4);
    assert.deepEqual((await followPages<Json>(hub, '/ocpi/2.2.1/tokens', unrouted.token)).items, []);
  });

  it('a CPO down for a while gets the token after retries, its newest version last; the others at once', async () => {
    const down = cpos[2] as OnboardedPlatform;
    down.partner.receiverMode = 'fail';
    assert.equal((await putToken(token('LATE', { valid: true, whitelist: 'ALWAYS' }))).body.status_code, 1000);
    const patch = { valid: false, last_updated: new Date(Date.now() + 1000).toISOString() };
    const patched = await call(hub, 'PATCH', '/ocpi/2.2.1/tokens/NL/EMP/LATE?type=RFID', { token: emsp.token, body: patch });
    assert.equal(patched.body.status_code, 1000, patched.text);
    for (const up of cpos.slice(0, 2)) await until('the patched token at an up CPO', () => tokensAt(up, 'LATE').some((r) => r.body['valid'] === false));
    assert.deepEqual(tokensAt(down, 'LATE'), []);
    await until('a few failed attempts to the CPO that is down', async () => {
      const { rows } = await stack.pool.query<{ attempts: number }>("select attempts from deliveries where kind = 'token' and object_id = 'LATE|RFID' and cpo_party_id = 'CP3'");
      return (rows[0]?.attempts ?? 0) >= 2;
    });
    down.partner.receiverMode = 'ok';
    await until('the token at the CPO that came back', () => tokensAt(down, 'LATE').some((r) => r.body['valid'] === false), 30_000);
    // Never an older version after a newer one: the versions it received only grow.
    const versions = tokensAt(down, 'LATE').map((r) => String(r.body['last_updated']));
    assert.deepEqual(versions, [...versions].sort());
    const last = tokensAt(down, 'LATE').at(-1);
    // The whole token with the PATCH merged, never an older version after a newer one.
    assert.equal(last?.body['valid'], false);
    assert.equal(last?.body['whitelist'], 'ALWAYS');
    assert.equal(last?.body['contract_id'], ocpiExample('token_put_example.json')['contract_id']);
  });

  it('OCPI-to naming one CPO delivers to that CPO only; naming the hub is a Broadcast Push to every routed CPO', async () => {
    const to = (cc: string, pid: string) => ({ 'OCPI-to-country-code': cc, 'OCPI-to-party-id': pid });
    assert.equal((await putToken(token('ONLY2'), to('BE', 'CP2'))).body.status_code, 1000);
    assert.equal((await putToken(token('BCAST'), to('NL', 'HUB'))).body.status_code, 1000);
    for (const cpo of cpos) await until('the broadcast token', () => tokensAt(cpo, 'BCAST').length > 0);
    await until('the token for CP2', () => tokensAt(cpos[1] as OnboardedPlatform, 'ONLY2').length > 0);
    // One delivery record each: the named CPO's, and one per routed CPO of the broadcast (not CP4's).
    const recipients = async (objectId: string) =>
      (await stack.pool.query<{ cpo: string }>("select cpo_party_id as cpo from deliveries where kind = 'token' and object_id = $1 order by 1", [objectId])).rows.map((r) => r.cpo);
    assert.deepEqual(await recipients('ONLY2|RFID'), ['CP2']);
    assert.deepEqual(await recipients('BCAST|RFID'), ['CP1', 'CP2', 'CP3']);
    assert.deepEqual(tokensAt(unrouted, 'BCAST'), []);
    // transport_and_format.asciidoc, Party to Party Broadcast Push: the hub sends it as itself.
    const broadcast = tokensAt(cpos[0] as OnboardedPlatform, 'BCAST')[0];
    assert.equal(broadcast?.headers['ocpi-from-country-code'], 'NL');
    assert.equal(broadcast?.headers['ocpi-from-party-id'], 'HUB');
    assert.equal(broadcast?.url, '/ocpi/2.2.1/tokens/NL/EMP/BCAST?type=RFID');
    const named = tokensAt(cpos[1] as OnboardedPlatform, 'ONLY2')[0];
    assert.equal(named?.headers['ocpi-from-party-id'], 'EMP');
  });
});
