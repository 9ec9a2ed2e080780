// Newest wins end to end (docs/decisions/0001-newest-state-wins.md): a CPO's location, EVSE,
// connector and tariff updates and an eMSP's token updates, sent newer first one after the other and
// both at once over parallel connections, leave the newer state in what partners pull and in what a
// CPO is sent; the older update is still answered 1000 (it was received) and the operator sees it.
// Real ingress, projector and dispatcher, real Kafka and Postgres, the CPO a real HTTP server.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, createTestStack, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { freePort, hubctl, ocpiExample, onboard, until, type OnboardedPlatform } from './helpers.ts';

type Json = Record<string, unknown>;

const T1 = '2026-03-01T09:00:00Z';
const T2 = '2026-03-01T09:00:00.700Z';

describe('newest wins: an older update never replaces a newer one', () => {
  let stack: TestStack;
  let services: ServiceProcess[] = [];
  let hub: string;
  let env: Record<string, string>;
  let cpo: OnboardedPlatform; // NL/NWC
  let emsp: OnboardedPlatform; // NL/NWE

  before(async () => {
    stack = await createTestStack('newest_wins_e2e');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', DELIVERY_RETRY_SCHEDULE_MS: '200,400,600,800,1000', DELIVERY_TIMEOUT_MS: '1000' });
    services = [
      await startService('ingress', env, /ingress listening/),
      await startService('projector', env, /projector running/, 60_000),
      await startService('dispatcher', env, /dispatcher running/, 60_000),
    ];
    cpo = await onboard(hub, env, 'CPO', [{ role: 'CPO', countryCode: 'NL', partyId: 'NWC' }], [
      { identifier: 'credentials', role: 'SENDER' },
      { identifier: 'tokens', role: 'RECEIVER' },
    ]);
    emsp = await onboard(hub, env, 'eMSP', [{ role: 'EMSP', countryCode: 'NL', partyId: 'NWE' }]);
    assert.equal((await hubctl(env, ['routing', 'enable', '--emsp', 'NL/NWE', '--cpo', 'NL/NWC'])).code, 0);
  });

  after(async () => {
    await Promise.allSettled([...services.map((s) => s.stop()), cpo?.partner.close(), emsp?.partner.close()]);
    await stack?.cleanup();
  });

  const send = (method: 'PUT' | 'PATCH', path: string, body: Json, token = cpo.token) => call(hub, method, `/ocpi/2.2.1/${path}`, { token, body });
  const location = (id: string): Json => ({
    ...ocpiExample('location_example.json'),
    country_code: 'NL',
    party_id: 'NWC',
    id,
    name: 'Initial',
    evses: [{ uid: 'E1', evse_id: 'NL*NWC*E1', status: 'AVAILABLE', connectors: [{ id: '1', standard: 'IEC_62196_T2', format: 'SOCKET', power_type: 'AC_3_PHASE', max_voltage: 230, max_amperage: 32, last_updated: '2026-03-01T08:00:00Z' }], last_updated: '2026-03-01T08:00:00Z' }],
    last_updated: '2026-03-01T08:00:00Z',
  });
  const pulled = async (id: string): Promise<Json> => (await call<Json>(hub, 'GET', `/ocpi/2.2.1/locations/NL/NWC/${id}`, { token: emsp.token })).body.data as Json;
  const evse = (l: Json) => (l['evses'] as Json[])[0] as Json;
  const connector = (l: Json) => (evse(l)['connectors'] as Json[])[0] as Json;

  /** The pairs of the finding: [newer, older] as [method, path suffix, body], and what must be pulled. */
  const pairs = (id: string) => [
    { what: 'EVSE status', newer: ['PATCH', `${id}/E1`, { status: 'CHARGING', last_updated: T2 }], older: ['PATCH', `${id}/E1`, { status: 'AVAILABLE', last_updated: T1 }], holds: (l: Json) => evse(l)['status'] === 'CHARGING' },
    { what: 'connector max_amperage', newer: ['PATCH', `${id}/E1/1`, { max_amperage: 16, last_updated: T2 }], older: ['PATCH', `${id}/E1/1`, { max_amperage: 20, last_updated: T1 }], holds: (l: Json) => connector(l)['max_amperage'] === 16 },
    { what: 'location name', newer: ['PATCH', id, { name: 'Newer', last_updated: T2 }], older: ['PATCH', id, { name: 'Older', last_updated: T1 }], holds: (l: Json) => l['name'] === 'Newer' },
  ] as const;

  for (const mode of ['one after the other', 'at once over parallel connections'] as const) {
    it(`locations: newer first, ${mode}: the eMSP pulls the newer state; both were answered 1000`, async () => {
      for (let i = 0; i < pairs('').length; i++) {
        const id = `NW-${mode === 'one after the other' ? 'SEQ' : 'PAR'}-${i}`;
        const p = pairs(id)[i];
        assert.ok(p);
        assert.equal((await send('PUT', `locations/NL/NWC/${id}`, location(id))).body.status_code, 1000);
        const [newer, older] = [p.newer, p.older].map(([method, suffix, body]) => () => send(method, `locations/NL/NWC/${suffix}`, body));
        const answers = mode === 'one after the other' ? [await newer!(), await older!()] : await Promise.all([newer!(), older!()]);
        for (const a of answers) assert.equal(a.body.status_code, 1000, `${p.what}: ${a.text}`);
        // Read-your-writes: the CPO's own detail GET waits for its writes; then the eMSP pulls.
        await call(hub, 'GET', `/ocpi/2.2.1/locations/NL/NWC/${id}`, { token: cpo.token });
        const seen = await until(`${p.what} projected`, async () => {
          const l = await pulled(id);
          return l && typeof l === 'object' && l['last_updated'] === T2 ? l : false;
        }, 20_000);
        assert.ok(p.holds(seen), `${p.what}: ${JSON.stringify(seen)}`);
      }
      // The operator sees the superseded updates (one per pair sent one after the other; at once,
      // the newer may have been appended second and the older applied then replaced).
      const listed = await hubctl(env, ['readmodel', 'rejects', '--model', 'locations', '--json']);
      assert.equal(listed.code, 0, listed.stderr);
      if (mode === 'one after the other') {
        const rows = JSON.parse(listed.stdout) as Array<{ subject: string; reason: string }>;
        for (let i = 0; i < pairs('').length; i++) assert.ok(rows.some((r) => r.subject.includes(`NW-SEQ-${i}`) && r.reason.startsWith('superseded:')), `pair ${i} listed: ${listed.stdout}`);
      }
    });
  }

  it('tariffs: a PUT with an older last_updated leaves the newer tariff', async () => {
    const tariff = (currency: string, last_updated: string) => ({ ...ocpiExample('tariff_1_simple_2hour.json'), country_code: 'NL', party_id: 'NWC', id: 'NW-T', currency, last_updated });
    assert.equal((await send('PUT', 'tariffs/NL/NWC/NW-T', tariff('EUR', T2))).body.status_code, 1000);
    assert.equal((await send('PUT', 'tariffs/NL/NWC/NW-T', tariff('USD', T1))).body.status_code, 1000);
    const own = await call<Json>(hub, 'GET', '/ocpi/2.2.1/tariffs/NL/NWC/NW-T', { token: cpo.token });
    assert.equal((own.body.data as Json)['currency'], 'EUR');
  });

  it('tokens: the read model and the CPO keep the newer token; the CPO is never sent the older after it', async () => {
    const token = (valid: boolean, last_updated: string): Json => ({ ...ocpiExample('token_put_example.json'), country_code: 'NL', party_id: 'NWE', uid: 'NW-TOKEN', type: 'RFID', valid, last_updated });
    const path = 'tokens/NL/NWE/NW-TOKEN?type=RFID';
    assert.equal((await send('PUT', path, token(false, T2), emsp.token)).body.status_code, 1000);
    assert.equal((await send('PATCH', path, { valid: true, last_updated: T1 }, emsp.token)).body.status_code, 1000);
    assert.equal((await send('PUT', path, token(true, T1), emsp.token)).body.status_code, 1000);
    const received = () => cpo.partner.received.filter((r) => r.kind === 'token' && r.body['uid'] === 'NW-TOKEN');
    await until('the token at the CPO', () => received().length > 0, 20_000);
    // The older updates are superseded in the projector and in the delivery queue alike.
    const stored = await until('the token in the read model', async () => (await stack.pool.query<{ document: Json }>("select document from tokens where party_id = 'NWE'")).rows[0]?.document ?? false, 20_000);
    assert.equal(stored['valid'], false);
    await new Promise((r) => setTimeout(r, 1500));
    const sent = received();
    assert.equal(sent.at(-1)?.body['valid'], false, `the last token the CPO got is the newer one: ${JSON.stringify(sent.map((r) => r.body['last_updated']))}`);
    assert.ok(sent.every((r) => r.body['last_updated'] === T2), 'no older token was sent at all');
  });
});
