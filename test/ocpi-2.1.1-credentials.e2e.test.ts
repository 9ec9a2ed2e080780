// OCPI 2.1.1 partners register beside 2.2.1 ones (credentials.md, 2.1.1; version_information_endpoint.md,
// 2.1.1): the operator allows a party its versions, each caller sees only those, the exchange runs in the
// version whose URL the partner called, a PUT under another allowed version switches it, and the prober
// checks the chosen version. Real ingress and prober processes, real Kafka and Postgres, partners as
// real HTTP servers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { topics } from '@hub/events';
import { createSchemaValidator } from '@hub/schemas';
import { call, createTestStack, startPartnerSimulator, startService, type PartnerSimulator, type ServiceProcess, type TestStack } from '@hub/testing';
import { freePort, hubctl, readTopic, type ReadRecord } from './helpers.ts';

const validator = createSchemaValidator();

describe('OCPI 2.1.1 credentials and versions, per party', () => {
  let stack: TestStack;
  let ingress: ServiceProcess;
  let prober: ServiceProcess;
  let cpo211: PartnerSimulator;
  let emspBoth: PartnerSimulator;
  let hub: string;
  let env: Record<string, string>;

  before(async () => {
    stack = await createTestStack('ocpi211-credentials');
    cpo211 = await startPartnerSimulator({ modules: [{ identifier: 'credentials', role: 'SENDER' }, { identifier: 'tokens', role: 'RECEIVER' }, { identifier: 'commands', role: 'RECEIVER' }, { identifier: 'locations', role: 'SENDER' }] });
    cpo211.versions = ['2.1.1'];
    emspBoth = await startPartnerSimulator({ modules: [{ identifier: 'credentials', role: 'SENDER' }, { identifier: 'sessions', role: 'RECEIVER' }, { identifier: 'tokens', role: 'SENDER' }] });
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', PROBE_INTERVAL_MS: '300', PROBE_TIMEOUT_MS: '1000' });
    ingress = await startService('ingress', env, /ingress listening/);
    prober = await startService('prober', env, /prober running/);
  });

  after(async () => {
    await Promise.allSettled([ingress?.stop(), prober?.stop(), cpo211?.close(), emspBoth?.close()]);
    await stack?.cleanup();
  });

  async function register(args: string[]): Promise<{ platform_id: string; initial_token: string }> {
    const out = await hubctl(env, ['party', 'register', ...args, '--json']);
    assert.equal(out.code, 0, out.stderr);
    return JSON.parse(out.stdout) as { platform_id: string; initial_token: string };
  }

  let cpoInitial = '';
  let cpoToken = '';
  let cpoPlatform = '';

  it('hubctl refuses an unknown version, and a second party on a 2.1.1 platform', async () => {
    const bad = await hubctl(env, ['party', 'register', '--role', 'CPO', '--country', 'NL', '--party', 'ZZZ', '--name', 'Z', '--versions', '2.0']);
    assert.equal(bad.code, 1, bad.stderr);
    assert.match(bad.stderr, /versions must be among 2\.1\.1, 2\.2\.1, 2\.3\.0, got 2\.0/);
    const r = await register(['--role', 'CPO', '--country', 'NL', '--party', 'OLD', '--name', 'Old CPO', '--versions', '2.1.1']);
    cpoInitial = r.initial_token;
    cpoPlatform = r.platform_id;
    const second = await hubctl(env, ['party', 'register', '--role', 'EMSP', '--country', 'NL', '--party', 'OLD', '--name', 'Old eMSP', '--platform', cpoPlatform]);
    assert.equal(second.code, 1);
    assert.match(second.stderr, /credentials name one party/);
  });

  it('GET /ocpi/versions lists each caller its own versions; a version not allowed answers 404', async () => {
    const versions = await call(hub, 'GET', '/ocpi/versions', { token: cpoInitial });
    assert.equal(versions.status, 200);
    assert.deepEqual(versions.body.data, [{ version: '2.1.1', url: `${hub}/ocpi/2.1.1` }]);
    const details = await call<{ version: string; endpoints: Array<Record<string, unknown>> }>(hub, 'GET', '/ocpi/2.1.1', { token: cpoInitial });
    assert.equal(details.body.status_code, 1000);
    assert.deepEqual(validator.validate('ocpi-2.1.1/version_details.json', details.body.data).violations, []);
    assert.ok(details.body.data?.endpoints.some((e) => e['identifier'] === 'credentials' && e['url'] === `${hub}/ocpi/2.1.1/credentials`));
    assert.ok(details.body.data?.endpoints.every((e) => !('role' in e)), '2.1.1 endpoints carry no role');
    // Without roles a 2.1.1 party reads each endpoint as its counterpart's interface: a CPO is shown the
    // hub's eMSP side (it pushes sessions and CDRs, pulls tokens), an eMSP the CPO side, where the hub
    // serves no session or CDR pull (version_information_endpoint.md; mod_sessions.md 2.1, mod_cdrs.md 2.1).
    const modulesOf = (d: typeof details) => (d.body.data?.endpoints ?? []).map((e) => e['identifier']).sort();
    assert.deepEqual(modulesOf(details), ['cdrs', 'credentials', 'locations', 'sessions', 'tariffs', 'tokens']);
    const emsp = await register(['--role', 'EMSP', '--country', 'IT', '--party', 'EMO', '--name', 'Old eMSP', '--versions', '2.1.1']);
    const emspDetails = await call<{ version: string; endpoints: Array<Record<string, unknown>> }>(hub, 'GET', '/ocpi/2.1.1', { token: emsp.initial_token });
    assert.deepEqual(validator.validate('ocpi-2.1.1/version_details.json', emspDetails.body.data).violations, []);
    assert.deepEqual(modulesOf(emspDetails), ['commands', 'credentials', 'locations', 'tariffs', 'tokens']);
    const other = await call(hub, 'GET', '/ocpi/2.2.1', { token: cpoInitial });
    assert.equal(other.status, 404);
    assert.equal(other.body.status_code, 2000);
    assert.match(String(other.body.status_message), /not enabled for these credentials/);
    const otherCredentials = await call(hub, 'POST', '/ocpi/2.2.1/credentials', { token: cpoInitial, body: {} });
    assert.equal(otherCredentials.status, 404);
  });

  it('a party registered without --versions sees exactly [2.2.1] and cannot use 2.1.1 URLs', async () => {
    const r = await register(['--role', 'EMSP', '--country', 'DE', '--party', 'NEW', '--name', 'New eMSP']);
    const versions = await call(hub, 'GET', '/ocpi/versions', { token: r.initial_token });
    assert.deepEqual(versions.body.data, [{ version: '2.2.1', url: `${hub}/ocpi/2.2.1` }]);
    const details = await call(hub, 'GET', '/ocpi/2.1.1', { token: r.initial_token });
    assert.equal(details.status, 404);
    assert.equal(details.body.status_code, 2000);
  });

  it('POST /ocpi/2.1.1/credentials: the 2.1.1 Credentials object both ways, endpoints stored with their roles', async () => {
    const res = await call<Record<string, unknown>>(hub, 'POST', '/ocpi/2.1.1/credentials', {
      token: cpoInitial,
      body: { token: cpo211.token, url: cpo211.versionsUrl, party_id: 'OLD', country_code: 'NL', business_details: { name: 'Old CPO' } },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status_code, 1000, res.text);
    const data = res.body.data ?? {};
    assert.deepEqual(validator.validate('ocpi-2.1.1/credentials.json', data).violations, [], JSON.stringify(data));
    assert.equal(data['url'], `${hub}/ocpi/versions`);
    assert.equal(data['party_id'], 'HUB');
    assert.ok(!('roles' in data));
    cpoToken = String(data['token']);
    // The hub fetched the partner's 2.1.1 details with the partner's token.
    assert.ok(cpo211.requests.some((r) => r.path === '/ocpi/2.1.1' && r.headers['authorization'] === `Token ${cpo211.token}`), JSON.stringify(cpo211.requests.map((r) => r.path)));
    const { rows } = await stack.pool.query<{ identifier: string; role: string }>(
      'select identifier, role from partner_endpoints where platform_id = $1 order by identifier',
      [cpoPlatform],
    );
    assert.deepEqual(rows, [
      { identifier: 'commands', role: 'RECEIVER' },
      { identifier: 'credentials', role: 'SENDER' },
      { identifier: 'locations', role: 'SENDER' },
      { identifier: 'tokens', role: 'RECEIVER' },
    ]);
    const show = await hubctl(env, ['party', 'show', '--country', 'NL', '--party', 'OLD', '--role', 'CPO', '--json']);
    const shown = JSON.parse(show.stdout) as { versions: string[]; version: string };
    assert.deepEqual([shown.versions, shown.version], [['2.1.1'], '2.1.1']);
    const registered = (records: ReadRecord[]) => records.filter((e) => e.headers['ce_type'] === 'hub.registry.credentials-registered.v1');
    const audit = await readTopic(stack, topics.registry, (records) => registered(records).length > 0, 10_000);
    assert.equal((JSON.parse(registered(audit)[0]?.value ?? '{}') as { version?: string }).version, '2.1.1');
  });

  it('the initial token was single use; the new token opens 2.1.1 and GET credentials answers in 2.1.1', async () => {
    const again = await call(hub, 'POST', '/ocpi/2.1.1/credentials', { token: cpoInitial, body: { token: 'x', url: cpo211.versionsUrl, party_id: 'OLD', country_code: 'NL', business_details: { name: 'x' } } });
    assert.equal(again.status, 401);
    const get = await call<Record<string, unknown>>(hub, 'GET', '/ocpi/2.1.1/credentials', { token: cpoToken });
    assert.equal(get.body.status_code, 1000);
    assert.equal(get.body.data?.['token'], cpoToken);
    assert.deepEqual(validator.validate('ocpi-2.1.1/credentials.json', get.body.data).violations, []);
  });

  it('2001 for a 2.2.1 Credentials object sent to the 2.1.1 URL, naming the violations', async () => {
    const res = await call(hub, 'PUT', '/ocpi/2.1.1/credentials', { token: cpoToken, body: { token: 'x', url: cpo211.versionsUrl, roles: [] } });
    assert.equal(res.body.status_code, 2001);
    assert.match(String(res.body.status_message), /business_details|party_id|roles/);
  });

  it('PUT rotates the token in 2.1.1; the old token stops working', async () => {
    const res = await call<Record<string, unknown>>(hub, 'PUT', '/ocpi/2.1.1/credentials', {
      token: cpoToken,
      body: { token: cpo211.token, url: cpo211.versionsUrl, party_id: 'OLD', country_code: 'NL', business_details: { name: 'Old CPO' } },
    });
    assert.equal(res.body.status_code, 1000, res.text);
    const old = await call(hub, 'GET', '/ocpi/versions', { token: cpoToken });
    assert.equal(old.status, 401);
    cpoToken = String(res.body.data?.['token']);
  });

  it('hubctl partner check checks a 2.1.1 platform in 2.1.1: its versions, details without roles and its receivers', async () => {
    const out = await hubctl(env, ['partner', 'check', 'NL/OLD', '--json']);
    const report = JSON.parse(out.stdout) as { version: string; ok: boolean; checks: Array<{ check: string; ok: boolean; reason: string }> };
    assert.equal(report.version, '2.1.1', out.stdout);
    assert.deepEqual(report.checks.filter((c) => !c.ok), [], out.stdout);
    assert.equal(out.code, 0, out.stderr);
    assert.ok(report.checks.some((c) => c.check === 'probe tokens' && c.ok), out.stdout);
  });

  it('a 2.1.1 Credentials object naming another party is refused', async () => {
    const res = await call(hub, 'PUT', '/ocpi/2.1.1/credentials', {
      token: cpoToken,
      body: { token: cpo211.token, url: cpo211.versionsUrl, party_id: 'XYZ', country_code: 'NL', business_details: { name: 'Old CPO' } },
    });
    assert.equal(res.body.status_code, 2001);
    assert.match(String(res.body.status_message), /exactly the parties registered/);
  });

  it('the prober checks the version the partner chose: a 2.1.1 partner listing only 2.1.1 stays CONNECTED', async () => {
    const before = Date.now();
    let probed = false;
    while (!probed && Date.now() - before < 10_000) {
      const { rows } = await stack.pool.query<{ status: string; last_probe_at: Date | null; last_error: string | null }>('select status, last_probe_at, last_error from platform_health where platform_id = $1', [cpoPlatform]);
      const row = rows[0];
      if (row?.last_probe_at && row.last_probe_at.getTime() > before) {
        assert.equal(row.status, 'CONNECTED', row.last_error ?? '');
        assert.equal(row.last_error, null);
        probed = true;
      } else await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok(probed, 'the prober probed the 2.1.1 platform');
  });

  it('a party allowed both versions registers in 2.1.1 and moves to 2.2.1 with PUT under 2.2.1 (the upgrade path)', async () => {
    emspBoth.versions = ['2.1.1', '2.2.1'];
    const r = await register(['--role', 'EMSP', '--country', 'DE', '--party', 'TWO', '--name', 'Both eMSP', '--versions', '2.2.1,2.1.1']);
    const versions = await call(hub, 'GET', '/ocpi/versions', { token: r.initial_token });
    assert.deepEqual(versions.body.data, [{ version: '2.1.1', url: `${hub}/ocpi/2.1.1` }, { version: '2.2.1', url: `${hub}/ocpi/2.2.1` }]);
    const first = await call<Record<string, unknown>>(hub, 'POST', '/ocpi/2.1.1/credentials', {
      token: r.initial_token,
      body: { token: emspBoth.token, url: emspBoth.versionsUrl, party_id: 'TWO', country_code: 'DE', business_details: { name: 'Both' } },
    });
    assert.equal(first.body.status_code, 1000, first.text);
    const endpoints = async () =>
      (await stack.pool.query<{ identifier: string; role: string }>('select identifier, role from partner_endpoints where platform_id = $1 order by identifier, role', [r.platform_id])).rows;
    // A 2.1.1 eMSP receives sessions and serves its tokens (versions.ts, endpointRoleIn211).
    assert.deepEqual(await endpoints(), [
      { identifier: 'credentials', role: 'SENDER' },
      { identifier: 'sessions', role: 'RECEIVER' },
      { identifier: 'tokens', role: 'SENDER' },
    ]);
    const upgraded = await call<{ token: string; roles: unknown[] }>(hub, 'PUT', '/ocpi/2.2.1/credentials', {
      token: String(first.body.data?.['token']),
      body: { token: emspBoth.token, url: emspBoth.versionsUrl, roles: [{ role: 'EMSP', country_code: 'DE', party_id: 'TWO', business_details: { name: 'Both' } }] },
    });
    assert.equal(upgraded.body.status_code, 1000, upgraded.text);
    assert.ok(Array.isArray(upgraded.body.data?.roles), 'answered with the 2.2.1 Credentials object');
    const { rows } = await stack.pool.query<{ version: string }>('select version from platforms where id = $1', [r.platform_id]);
    assert.equal(rows[0]?.version, '2.2.1');
    assert.ok(emspBoth.requests.some((q) => q.path === '/ocpi/2.2.1'), 'the hub fetched the 2.2.1 details');
  });

  it('3002 when the partner does not list the version whose URL it called', async () => {
    const r = await register(['--role', 'CPO', '--country', 'BE', '--party', 'NOV', '--name', 'No 2.1.1', '--versions', '2.1.1']);
    const only221 = await startPartnerSimulator();
    only221.versions = ['2.2.1'];
    try {
      const res = await call(hub, 'POST', '/ocpi/2.1.1/credentials', {
        token: r.initial_token,
        body: { token: only221.token, url: only221.versionsUrl, party_id: 'NOV', country_code: 'BE', business_details: { name: 'x' } },
      });
      assert.equal(res.body.status_code, 3002);
      assert.match(String(res.body.status_message), /lists 2\.2\.1, not 2\.1\.1/);
    } finally {
      await only221.close();
    }
  });
});
