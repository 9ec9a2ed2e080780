// OCPI 2.3.0 partners register beside 2.2.1 and 2.1.1 ones (ocpi-2.3.0/credentials.asciidoc,
// version_information_endpoint.asciidoc): the operator allows a party 2.3.0, only such callers see it,
// the exchange runs in 2.3.0 both ways (the hub names itself in hub_party_id and lists the parties the
// caller is routed to, no HUB role), the initial token is single use, PUT rotates, and a PUT under
// another allowed version switches it. Real ingress process, real Kafka and Postgres, partners as real
// HTTP servers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { topics } from '@hub/events';
import { createSchemaValidator } from '@hub/schemas';
import { call, createTestStack, startPartnerSimulator, startService, type PartnerSimulator, type ServiceProcess, type TestStack } from '@hub/testing';
import { freePort, hubctl, onboard, readTopic, type ReadRecord } from './helpers.ts';

const validator = createSchemaValidator();
const base64 = (token: string) => `Token ${Buffer.from(token, 'utf8').toString('base64')}`;

type Credentials230 = { token: string; url: string; hub_party_id?: string; roles: Array<{ role: string; country_code: string; party_id: string; business_details: { name: string } }> };

describe('OCPI 2.3.0 credentials and versions, per party', () => {
  let stack: TestStack;
  let ingress: ServiceProcess;
  let cpo230: PartnerSimulator;
  let emsp221: Awaited<ReturnType<typeof onboard>> | undefined;
  let hub: string;
  let hubPartyId: string;
  let env: Record<string, string>;

  before(async () => {
    stack = await createTestStack('ocpi230-credentials');
    cpo230 = await startPartnerSimulator({ modules: [{ identifier: 'credentials', role: 'SENDER' }, { identifier: 'tokens', role: 'RECEIVER' }, { identifier: 'commands', role: 'RECEIVER' }, { identifier: 'locations', role: 'SENDER' }] });
    cpo230.versions = ['2.3.0'];
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1' });
    hubPartyId = `${(env['HUB_COUNTRY_CODE'] ?? 'NL').toUpperCase()}${(env['HUB_PARTY_ID'] ?? 'HUB').toUpperCase()}`;
    ingress = await startService('ingress', env, /ingress listening/);
  });

  after(async () => {
    await Promise.allSettled([ingress?.stop(), cpo230?.close(), emsp221?.partner.close()]);
    await stack?.cleanup();
  });

  async function register(args: string[]): Promise<{ platform_id: string; initial_token: string }> {
    const out = await hubctl(env, ['party', 'register', ...args, '--json']);
    assert.equal(out.code, 0, out.stderr);
    return JSON.parse(out.stdout) as { platform_id: string; initial_token: string };
  }

  const cpoRole = { role: 'CPO', country_code: 'BE', party_id: 'NEO', business_details: { name: 'New CPO' } };
  let cpoInitial = '';
  let cpoToken = '';
  let cpoPlatform = '';

  it('hubctl accepts --versions 2.3.0 and party show shows it', async () => {
    const r = await register(['--role', 'CPO', '--country', 'BE', '--party', 'NEO', '--name', 'New CPO', '--versions', '2.3.0']);
    cpoInitial = r.initial_token;
    cpoPlatform = r.platform_id;
    const show = await hubctl(env, ['party', 'show', '--country', 'BE', '--party', 'NEO', '--role', 'CPO', '--json']);
    assert.equal(show.code, 0, show.stderr);
    const shown = JSON.parse(show.stdout) as { versions: string[]; version: string | null };
    assert.deepEqual(shown.versions, ['2.3.0']);
    const bad = await hubctl(env, ['party', 'register', '--role', 'CPO', '--country', 'NL', '--party', 'ZZZ', '--name', 'Z', '--versions', '2.3']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /versions must be among 2\.1\.1, 2\.2\.1, 2\.3\.0, got 2\.3/);
  });

  it('GET /ocpi/versions lists 2.3.0 to a caller allowed it; its details list the 2.3.0 modules with their roles', async () => {
    const versions = await call(hub, 'GET', '/ocpi/versions', { token: cpoInitial });
    assert.equal(versions.status, 200);
    assert.deepEqual(versions.body.data, [{ version: '2.3.0', url: `${hub}/ocpi/2.3.0` }]);
    const details = await call<{ version: string; endpoints: Array<Record<string, unknown>> }>(hub, 'GET', '/ocpi/2.3.0', { token: cpoInitial });
    assert.equal(details.body.status_code, 1000, details.text);
    assert.deepEqual(validator.validate('ocpi-2.3.0/version_details.json', details.body.data).violations, []);
    assert.equal(details.body.data?.version, '2.3.0');
    // Every module the hub serves in 2.2.1, in 2.3.0 (the endpoints each module declares in @hub/modules), with the same roles.
    const endpoint = (identifier: string, role: string, path = identifier) => ({ identifier, role, url: `${hub}/ocpi/2.3.0/${path}` });
    assert.deepEqual(details.body.data?.endpoints, [
      endpoint('credentials', 'SENDER'),
      endpoint('hubclientinfo', 'SENDER'),
      endpoint('locations', 'SENDER'),
      endpoint('locations', 'RECEIVER'),
      endpoint('tariffs', 'SENDER'),
      endpoint('tariffs', 'RECEIVER'),
      endpoint('sessions', 'RECEIVER'),
      endpoint('cdrs', 'RECEIVER'),
      endpoint('tokens', 'SENDER'),
      endpoint('tokens', 'RECEIVER'),
      endpoint('commands', 'RECEIVER'),
      endpoint('chargingprofiles', 'RECEIVER'),
      endpoint('chargingprofiles', 'SENDER', 'chargingprofiles/sender'),
    ]);
    for (const path of ['/ocpi/2.2.1', '/ocpi/2.1.1']) {
      const other = await call(hub, 'GET', path, { token: cpoInitial });
      assert.equal(other.status, 404, path);
      assert.equal(other.body.status_code, 2000);
    }
  });

  it('a party not allowed 2.3.0 never sees it, nor can it use a 2.3.0 URL', async () => {
    const r = await register(['--role', 'EMSP', '--country', 'DE', '--party', 'OLD', '--name', 'Old eMSP', '--versions', '2.1.1,2.2.1']);
    const versions = await call(hub, 'GET', '/ocpi/versions', { token: r.initial_token });
    assert.deepEqual(versions.body.data, [{ version: '2.1.1', url: `${hub}/ocpi/2.1.1` }, { version: '2.2.1', url: `${hub}/ocpi/2.2.1` }]);
    const details = await call(hub, 'GET', '/ocpi/2.3.0', { token: r.initial_token });
    assert.equal(details.status, 404);
    assert.match(String(details.body.status_message), /not enabled for these credentials/);
    const credentials = await call(hub, 'POST', '/ocpi/2.3.0/credentials', { token: r.initial_token, body: {} });
    assert.equal(credentials.status, 404);
  });

  it('POST /ocpi/2.3.0/credentials: the 2.3.0 Credentials object both ways; with no party routed yet the hub lists itself as OTHER', async () => {
    const res = await call<Credentials230>(hub, 'POST', '/ocpi/2.3.0/credentials', {
      token: cpoInitial,
      body: { token: cpo230.token, url: cpo230.versionsUrl, roles: [cpoRole] },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status_code, 1000, res.text);
    const data = res.body.data as Credentials230;
    assert.deepEqual(validator.validate('ocpi-2.3.0/credentials.json', data).violations, [], JSON.stringify(data));
    assert.equal(data.url, `${hub}/ocpi/versions`);
    assert.equal(data.hub_party_id, hubPartyId);
    assert.deepEqual(data.roles.map((r) => [r.role, `${r.country_code}${r.party_id}`]), [['OTHER', hubPartyId]]);
    cpoToken = data.token;
    // The hub fetched the partner's 2.3.0 versions and details with the partner's token, Base64 as since 2.2.
    assert.ok(cpo230.requests.some((r) => r.path === '/ocpi/versions' && r.headers['authorization'] === base64(cpo230.token)));
    assert.ok(cpo230.requests.some((r) => r.path === '/ocpi/2.3.0' && r.headers['authorization'] === base64(cpo230.token)), JSON.stringify(cpo230.requests.map((r) => r.path)));
    const { rows } = await stack.pool.query<{ identifier: string; role: string; url: string }>(
      'select identifier, role, url from partner_endpoints where platform_id = $1 order by identifier',
      [cpoPlatform],
    );
    assert.deepEqual(rows, [
      { identifier: 'commands', role: 'RECEIVER', url: `${cpo230.baseUrl}/ocpi/2.3.0/commands` },
      { identifier: 'credentials', role: 'SENDER', url: `${cpo230.baseUrl}/ocpi/2.3.0/credentials` },
      { identifier: 'locations', role: 'SENDER', url: `${cpo230.baseUrl}/ocpi/2.3.0/locations` },
      { identifier: 'tokens', role: 'RECEIVER', url: `${cpo230.baseUrl}/ocpi/2.3.0/tokens` },
    ]);
    const platform = await stack.pool.query<{ version: string; versions_url: string }>('select version, versions_url from platforms where id = $1', [cpoPlatform]);
    assert.deepEqual(platform.rows[0], { version: '2.3.0', versions_url: cpo230.versionsUrl });
    const show = await hubctl(env, ['party', 'show', '--country', 'BE', '--party', 'NEO', '--role', 'CPO', '--json']);
    const shown = JSON.parse(show.stdout) as { versions: string[]; version: string };
    assert.deepEqual([shown.versions, shown.version], [['2.3.0'], '2.3.0']);
    const registered = (records: ReadRecord[]) => records.filter((e) => e.headers['ce_type'] === 'hub.registry.credentials-registered.v1');
    const audit = await readTopic(stack, topics.registry, (records) => registered(records).length > 0, 10_000);
    assert.equal((JSON.parse(registered(audit)[0]?.value ?? '{}') as { version?: string }).version, '2.3.0');
  });

  it('the initial token was single use; the new token opens 2.3.0 and GET credentials answers in 2.3.0', async () => {
    const again = await call(hub, 'POST', '/ocpi/2.3.0/credentials', { token: cpoInitial, body: { token: 'x', url: cpo230.versionsUrl, roles: [cpoRole] } });
    assert.equal(again.status, 401);
    const get = await call<Credentials230>(hub, 'GET', '/ocpi/2.3.0/credentials', { token: cpoToken });
    assert.equal(get.body.status_code, 1000, get.text);
    assert.equal(get.body.data?.token, cpoToken);
    assert.equal(get.body.data?.hub_party_id, hubPartyId);
    assert.deepEqual(validator.validate('ocpi-2.3.0/credentials.json', get.body.data).violations, []);
  });

  it("the hub's Credentials list the parties the caller is routed to, in their roles, and no HUB role", async () => {
    emsp221 = await onboard(hub, env, 'Routed eMSP', [{ role: 'EMSP', countryCode: 'NL', partyId: 'EMR' }]);
    await onboard(hub, env, 'Unrouted eMSP', [{ role: 'EMSP', countryCode: 'NL', partyId: 'EMU' }]).then((p) => p.partner.close());
    const routed = await hubctl(env, ['routing', 'enable', '--emsp', 'NL/EMR', '--cpo', 'BE/NEO']);
    assert.equal(routed.code, 0, routed.stderr);
    const get = await call<Credentials230>(hub, 'GET', '/ocpi/2.3.0/credentials', { token: cpoToken });
    assert.equal(get.body.status_code, 1000, get.text);
    assert.deepEqual(validator.validate('ocpi-2.3.0/credentials.json', get.body.data).violations, []);
    assert.equal(get.body.data?.hub_party_id, hubPartyId);
    assert.deepEqual(get.body.data?.roles, [{ role: 'EMSP', country_code: 'NL', party_id: 'EMR', business_details: { name: 'Routed eMSP' } }]);
    // A 2.2.1 caller still gets the hub as its one HUB role (ocpi-2.2.1/credentials.asciidoc).
    const get221 = await call<Credentials230>(hub, 'GET', '/ocpi/2.2.1/credentials', { token: emsp221.token });
    assert.deepEqual(get221.body.data?.roles.map((r) => r.role), ['HUB']);
    assert.ok(!('hub_party_id' in (get221.body.data ?? {})));
  });

  it('2001 for a 2.1.1 Credentials object sent to the 2.3.0 URL, and for roles naming another party', async () => {
    const old = await call(hub, 'PUT', '/ocpi/2.3.0/credentials', { token: cpoToken, body: { token: 'x', url: cpo230.versionsUrl, party_id: 'NEO', country_code: 'BE', business_details: { name: 'x' } } });
    assert.equal(old.body.status_code, 2001);
    assert.match(String(old.body.status_message), /roles/);
    const foreign = await call(hub, 'PUT', '/ocpi/2.3.0/credentials', { token: cpoToken, body: { token: cpo230.token, url: cpo230.versionsUrl, roles: [{ ...cpoRole, party_id: 'XYZ' }] } });
    assert.equal(foreign.body.status_code, 2001);
    assert.match(String(foreign.body.status_message), /exactly the parties registered/);
  });

  it("PUT rotates the token in 2.3.0 (a partner's own hub_party_id accepted); the old token stops working", async () => {
    const before = cpo230.requests.filter((r) => r.path === '/ocpi/2.3.0').length;
    const res = await call<Credentials230>(hub, 'PUT', '/ocpi/2.3.0/credentials', {
      token: cpoToken,
      body: { token: cpo230.token, url: cpo230.versionsUrl, hub_party_id: 'BEHBX', roles: [cpoRole] },
    });
    assert.equal(res.body.status_code, 1000, res.text);
    assert.notEqual(res.body.data?.token, cpoToken);
    assert.equal(res.body.data?.hub_party_id, hubPartyId);
    assert.ok(cpo230.requests.filter((r) => r.path === '/ocpi/2.3.0').length > before, 'the hub fetched the 2.3.0 details again');
    const old = await call(hub, 'GET', '/ocpi/versions', { token: cpoToken });
    assert.equal(old.status, 401);
    cpoToken = String(res.body.data?.token);
    const fresh = await call(hub, 'GET', '/ocpi/2.3.0', { token: cpoToken });
    assert.equal(fresh.body.status_code, 1000);
  });

  it('a party allowed 2.2.1 and 2.3.0 registers in 2.2.1 and moves to 2.3.0 with PUT under 2.3.0 (and back)', async () => {
    const both = await startPartnerSimulator({ modules: [{ identifier: 'credentials', role: 'SENDER' }, { identifier: 'sessions', role: 'RECEIVER' }, { identifier: 'cdrs', role: 'RECEIVER' }] });
    both.versions = ['2.2.1', '2.3.0'];
    try {
      const r = await register(['--role', 'EMSP', '--country', 'DE', '--party', 'TWO', '--name', 'Both eMSP', '--versions', '2.3.0,2.2.1']);
      const versions = await call(hub, 'GET', '/ocpi/versions', { token: r.initial_token });
      assert.deepEqual(versions.body.data, [{ version: '2.2.1', url: `${hub}/ocpi/2.2.1` }, { version: '2.3.0', url: `${hub}/ocpi/2.3.0` }]);
      const role = { role: 'EMSP', country_code: 'DE', party_id: 'TWO', business_details: { name: 'Both' } };
      const first = await call<Credentials230>(hub, 'POST', '/ocpi/2.2.1/credentials', { token: r.initial_token, body: { token: both.token, url: both.versionsUrl, roles: [role] } });
      assert.equal(first.body.status_code, 1000, first.text);
      assert.deepEqual(first.body.data?.roles.map((x) => x.role), ['HUB']);
      const version = async () => (await stack.pool.query<{ version: string }>('select version from platforms where id = $1', [r.platform_id])).rows[0]?.version;
      assert.equal(await version(), '2.2.1');
      const upgraded = await call<Credentials230>(hub, 'PUT', '/ocpi/2.3.0/credentials', { token: String(first.body.data?.token), body: { token: both.token, url: both.versionsUrl, roles: [role] } });
      assert.equal(upgraded.body.status_code, 1000, upgraded.text);
      assert.equal(upgraded.body.data?.hub_party_id, hubPartyId, 'answered with the 2.3.0 Credentials object');
      assert.deepEqual(validator.validate('ocpi-2.3.0/credentials.json', upgraded.body.data).violations, []);
      assert.equal(await version(), '2.3.0');
      assert.ok(both.requests.some((q) => q.path === '/ocpi/2.3.0'), 'the hub fetched the 2.3.0 details');
      const endpoints = await stack.pool.query<{ url: string }>('select url from partner_endpoints where platform_id = $1 order by url', [r.platform_id]);
      assert.ok(endpoints.rows.every((e) => e.url.includes('/ocpi/2.3.0/')), JSON.stringify(endpoints.rows));
      const back = await call<Credentials230>(hub, 'PUT', '/ocpi/2.2.1/credentials', { token: String(upgraded.body.data?.token), body: { token: both.token, url: both.versionsUrl, roles: [role] } });
      assert.equal(back.body.status_code, 1000, back.text);
      assert.equal(await version(), '2.2.1');
    } finally {
      await both.close();
    }
  });

  it('3002 when the partner does not list 2.3.0, whose URL it called', async () => {
    const r = await register(['--role', 'CPO', '--country', 'BE', '--party', 'NOV', '--name', 'No 2.3.0', '--versions', '2.3.0']);
    const only221 = await startPartnerSimulator();
    only221.versions = ['2.2.1'];
    try {
      const res = await call(hub, 'POST', '/ocpi/2.3.0/credentials', {
        token: r.initial_token,
        body: { token: only221.token, url: only221.versionsUrl, roles: [{ role: 'CPO', country_code: 'BE', party_id: 'NOV', business_details: { name: 'x' } }] },
      });
      assert.equal(res.body.status_code, 3002);
      assert.match(String(res.body.status_message), /lists 2\.2\.1, not 2\.3\.0/);
    } finally {
      await only221.close();
    }
  });
});
