// The onboarding sequence (a)-(e) of the interface document (What the service does 10), run end to end against the real services
// (ingress and prober processes), real Kafka and real Postgres, with the partner a real HTTP server.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { topics } from '@hub/events';
import { hashCredentialsToken } from '@hub/ocpi';
import { call, createTestStack, startPartnerSimulator, startService, type PartnerSimulator, type ServiceProcess, type TestStack } from '@hub/testing';
import { hubctl, readTopic, freePort } from './helpers.ts';

describe('onboarding a partner (interface document, Onboarding sequence a-e)', () => {
  let stack: TestStack;
  let ingress: ServiceProcess;
  let prober: ServiceProcess;
  let partner: PartnerSimulator;
  let hub: string;
  let env: Record<string, string>;

  before(async () => {
    stack = await createTestStack('onboarding');
    partner = await startPartnerSimulator({ modules: [{ identifier: 'credentials', role: 'SENDER' }, { identifier: 'sessions', role: 'RECEIVER' }] });
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', PROBE_INTERVAL_MS: '300', PROBE_TIMEOUT_MS: '1000' });
    ingress = await startService('ingress', env, /ingress listening/);
    prober = await startService('prober', env, /prober running/);
  });

  after(async () => {
    await Promise.allSettled([ingress?.stop(), prober?.stop(), partner?.close()]);
    await stack?.cleanup();
  });

  let initialToken = '';
  let hubToken = '';
  let platformId = '';

  it('(a) the account team registers the party with hubctl and gets an initial token', async () => {
    const out = await hubctl(env, ['party', 'register', '--role', 'CPO', '--country', 'nl', '--party', 'abc', '--name', 'Sim CPO', '--json']);
    assert.equal(out.code, 0, out.stderr);
    const result = JSON.parse(out.stdout) as { platform_id: string; initial_token: string; audit_published: boolean };
    initialToken = result.initial_token;
    platformId = result.platform_id;
    assert.ok(initialToken.length >= 43, 'token carries at least 256 bits');
    assert.equal(result.audit_published, true);
    // Stored as a hash only.
    const { rows } = await stack.pool.query<{ token_hash: string }>('select token_hash from credentials_tokens');
    assert.deepEqual(rows.map((r) => r.token_hash), [hashCredentialsToken(initialToken)]);
    const dump = await stack.pool.query<{ t: string }>(`select string_agg(t::text, ' ') as t from (select * from credentials_tokens) t`);
    assert.ok(!dump.rows[0]?.t.includes(initialToken), 'the initial token itself is not stored');
  });

  it('the initial token opens versions but no other module', async () => {
    const versions = await call(hub, 'GET', '/ocpi/versions', { token: initialToken });
    assert.equal(versions.status, 200);
    assert.deepEqual(versions.body.data, [{ version: '2.2.1', url: `${hub}/ocpi/2.2.1` }]);
    const info = await call(hub, 'GET', '/ocpi/2.2.1/hubclientinfo', { token: initialToken });
    assert.equal(info.status, 401);
    assert.equal(info.body.status_code, 2000);
  });

  it('(b) POST credentials: the hub fetches the partner with its token and answers with its own', async () => {
    const res = await call<{ token: string; url: string; roles: Array<Record<string, unknown>> }>(hub, 'POST', '/ocpi/2.2.1/credentials', {
      token: initialToken,
      headers: { 'X-Request-ID': 'req-1', 'X-Correlation-ID': 'corr-1' },
      body: {
        token: partner.token,
        url: partner.versionsUrl,
        roles: [{ role: 'CPO', country_code: 'NL', party_id: 'ABC', business_details: { name: 'Sim CPO' } }],
      },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status_code, 1000);
    assert.match(res.body.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.equal(res.headers['x-request-id'], 'req-1');
    assert.equal(res.headers['x-correlation-id'], 'corr-1');
    const data = res.body.data;
    assert.ok(data);
    hubToken = data.token;
    assert.notEqual(hubToken, initialToken);
    assert.equal(data.url, `${hub}/ocpi/versions`);
    assert.deepEqual(data.roles, [{ role: 'HUB', party_id: 'HUB', country_code: 'NL', business_details: { name: 'OCPI Roaming Hub' } }]);
    // The hub called the partner's versions and 2.2.1 details with the partner's token, Base64 encoded,
    // a new request id and the partner's correlation id.
    const fetched = partner.requests.filter((r) => r.method === 'GET');
    assert.deepEqual(fetched.map((r) => r.path), ['/ocpi/versions', '/ocpi/2.2.1']);
    for (const r of fetched) {
      assert.equal(r.headers['authorization'], `Token ${Buffer.from(partner.token).toString('base64')}`);
      assert.equal(r.headers['x-correlation-id'], 'corr-1');
      assert.notEqual(r.headers['x-request-id'], 'req-1');
    }
    const endpoints = await stack.pool.query('select identifier, role from partner_endpoints order by identifier');
    assert.deepEqual(endpoints.rows, [{ identifier: 'credentials', role: 'SENDER' }, { identifier: 'sessions', role: 'RECEIVER' }]);
  });

  it('the initial token works only once', async () => {
    const again = await call(hub, 'POST', '/ocpi/2.2.1/credentials', {
      token: initialToken,
      body: { token: partner.token, url: partner.versionsUrl, roles: [{ role: 'CPO', country_code: 'NL', party_id: 'ABC', business_details: { name: 'Sim CPO' } }] },
    });
    assert.equal(again.status, 401);
    const versions = await call(hub, 'GET', '/ocpi/versions', { token: initialToken });
    assert.equal(versions.status, 401);
  });

  it('POST with the hub token once registered is 405 (credentials.asciidoc, POST)', async () => {
    const res = await call(hub, 'POST', '/ocpi/2.2.1/credentials', {
      token: hubToken,
      body: { token: partner.token, url: partner.versionsUrl, roles: [{ role: 'CPO', country_code: 'NL', party_id: 'ABC', business_details: { name: 'Sim CPO' } }] },
    });
    assert.equal(res.status, 405);
  });

  it('PUT confirms, and a rotation kills the old hub token once the new one is answered', async () => {
    const confirm = await call<{ token: string }>(hub, 'PUT', '/ocpi/2.2.1/credentials', {
      token: hubToken,
      body: { token: partner.token, url: partner.versionsUrl, roles: [{ role: 'CPO', country_code: 'NL', party_id: 'ABC', business_details: { name: 'Sim CPO' } }] },
    });
    assert.equal(confirm.status, 200, confirm.text);
    const confirmedToken = confirm.body.data?.token ?? '';
    assert.equal((await call(hub, 'GET', '/ocpi/2.2.1', { token: hubToken })).status, 401, 'token before the PUT is dead');
    partner.token = 'rotated-partner-token';
    const rotate = await call<{ token: string }>(hub, 'PUT', '/ocpi/2.2.1/credentials', {
      token: confirmedToken,
      body: { token: partner.token, url: partner.versionsUrl, roles: [{ role: 'CPO', country_code: 'NL', party_id: 'ABC', business_details: { name: 'Sim CPO' } }] },
    });
    assert.equal(rotate.status, 200, rotate.text);
    assert.equal((await call(hub, 'GET', '/ocpi/2.2.1', { token: confirmedToken })).status, 401);
    hubToken = rotate.body.data?.token ?? '';
    // The hub re-fetched the endpoints with the partner's new token.
    // (The prober may call /ocpi/versions in between, so look at the version details fetch.)
    const last = partner.requests.filter((r) => r.path === '/ocpi/2.2.1').at(-1);
    assert.equal(last?.headers['authorization'], `Token ${Buffer.from('rotated-partner-token').toString('base64')}`);
    const get = await call<{ token: string }>(hub, 'GET', '/ocpi/2.2.1/credentials', { token: hubToken });
    assert.equal(get.body.data?.token, hubToken);
  });

  it('(c)(d) receiver URLs and routing are set by the account team with hubctl', async () => {
    const emsp = await hubctl(env, ['party', 'register', '--role', 'EMSP', '--country', 'DE', '--party', 'EMS', '--name', 'Sim eMSP', '--json']);
    assert.equal(emsp.code, 0, emsp.stderr);
    const endpoint = await hubctl(env, ['endpoint', 'set', '--country', 'DE', '--party', 'EMS', '--role', 'EMSP', '--module', 'sessions', '--url', 'https://emsp.example.com/ocpi/2.2.1/sessions']);
    assert.equal(endpoint.code, 0, endpoint.stderr);
    const rule = await hubctl(env, ['routing', 'enable', '--emsp', 'DE/EMS', '--cpo', 'NL/ABC', '--json']);
    assert.equal(rule.code, 0, rule.stderr);
    const list = await hubctl(env, ['party', 'list', '--json']);
    const parties = JSON.parse(list.stdout) as Array<{ party_id: string; status: string; receiver_overrides: Record<string, string> }>;
    assert.deepEqual(parties.map((p) => [p.party_id, p.status]), [['EMS', 'PLANNED'], ['ABC', 'CONNECTED']]);
    assert.equal(parties[0]?.receiver_overrides['sessions'], 'https://emsp.example.com/ocpi/2.2.1/sessions');
  });

  it('(e) the partner verifies: versions, version details and hubclientinfo shows it CONNECTED', async () => {
    const versions = await call(hub, 'GET', '/ocpi/versions', { token: hubToken });
    assert.equal(versions.body.status_code, 1000);
    const details = await call<{ version: string; endpoints: Array<{ identifier: string; role: string; url: string }> }>(hub, 'GET', '/ocpi/2.2.1', { token: hubToken });
    assert.equal(details.body.data?.version, '2.2.1');
    assert.deepEqual(details.body.data?.endpoints.find((e) => e.identifier === 'credentials'), { identifier: 'credentials', role: 'SENDER', url: `${hub}/ocpi/2.2.1/credentials` });
    const info = await call<Array<{ party_id: string; country_code: string; role: string; status: string; last_updated: string }>>(hub, 'GET', '/ocpi/2.2.1/hubclientinfo', { token: hubToken });
    assert.equal(info.status, 200);
    assert.equal(info.headers['x-total-count'], '2');
    const mine = info.body.data?.find((c) => c.party_id === 'ABC');
    assert.equal(mine?.status, 'CONNECTED');
    assert.equal(mine?.role, 'CPO');
    assert.match(mine?.last_updated ?? '', /Z$/);
    // The routed eMSP is visible too, not yet connected.
    assert.equal(info.body.data?.find((c) => c.party_id === 'EMS')?.status, 'PLANNED');
  });

  it('a partner whose server goes down shows OFFLINE after a probe, and CONNECTED again when back', async () => {
    const mark = prober.logs.length;
    await partner.goDown();
    await prober.waitForLog(/partner health changed.*"ok":false/, 10_000, mark);
    const info = await call<Array<{ party_id: string; status: string }>>(hub, 'GET', '/ocpi/2.2.1/hubclientinfo', { token: hubToken });
    assert.equal(info.body.data?.find((c) => c.party_id === 'ABC')?.status, 'OFFLINE');
    const mark2 = prober.logs.length;
    await partner.comeUp();
    await prober.waitForLog(/partner health changed.*"ok":true/, 10_000, mark2);
    const again = await call<Array<{ party_id: string; status: string }>>(hub, 'GET', '/ocpi/2.2.1/hubclientinfo', { token: hubToken });
    assert.equal(again.body.data?.find((c) => c.party_id === 'ABC')?.status, 'CONNECTED');
    const port = /"operatorPort":(\d+)/.exec(prober.logs.find((l) => l.includes('prober running')) ?? '')?.[1];
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    assert.match(metrics, new RegExp(`hub_partner_up\\{platform="${platformId}",parties="NL/ABC/CPO",service="prober"\\} 1`));
  });

  it('every registry change is on the registry topic in order, without any token', async () => {
    const health = 'hub.registry.platform-health-changed.v1';
    const events = await readTopic(
      stack,
      topics.registry,
      // Probes run on their own clock: wait for the partner's recovery (the last two health events
      // OFFLINE then CONNECTED) rather than for any two, which an extra OFFLINE probe can precede.
      (rs) =>
        rs.filter((r) => r.headers['ce_type'] !== health).length >= 7 &&
        rs
          .filter((r) => r.headers['ce_type'] === health)
          .slice(-2)
          .map((r) => (JSON.parse(r.value) as { status: string }).status)
          .join() === 'OFFLINE,CONNECTED',
      20_000,
    );
    const types = events.map((e) => e.headers['ce_type']);
    // Health changes interleave wherever probes happened to run (e.g. between the partner changing its
    // token and telling the hub); the operator changes keep their order.
    assert.deepEqual(types.filter((t) => t !== health), [
      'hub.registry.party-registered.v1',
      'hub.registry.credentials-registered.v1',
      'hub.registry.credentials-updated.v1',
      'hub.registry.credentials-updated.v1',
      'hub.registry.party-registered.v1',
      'hub.registry.endpoint-overridden.v1',
      'hub.registry.routing-rule-changed.v1',
    ]);
    assert.deepEqual(
      events.filter((e) => e.headers['ce_type'] === health).slice(-2).map((e) => (JSON.parse(e.value) as { status: string }).status),
      ['OFFLINE', 'CONNECTED'],
    );
    const registered = events[1];
    assert.equal(registered?.headers['x-correlation-id'], 'corr-1');
    assert.equal(registered?.key, platformId);
    for (const e of events) {
      assert.ok(!e.value.includes(partner.token) && !e.value.includes('rotated-partner-token') && !e.value.includes(hubToken), 'no token in audit events');
    }
  });

  it('DELETE unregisters: the hub token stops working and hubclientinfo no longer lists it CONNECTED', async () => {
    const del = await call(hub, 'DELETE', '/ocpi/2.2.1/credentials', { token: hubToken });
    assert.equal(del.status, 200);
    assert.equal(del.body.status_code, 1000);
    assert.equal((await call(hub, 'GET', '/ocpi/versions', { token: hubToken })).status, 401);
    const list = JSON.parse((await hubctl(env, ['party', 'show', '--country', 'NL', '--party', 'ABC', '--role', 'CPO', '--json'])).stdout) as { status: string };
    assert.equal(list.status, 'PLANNED');
  });

  it('no log line of any service contains a token', () => {
    for (const line of [...ingress.logs, ...prober.logs]) {
      for (const secret of [initialToken, hubToken, partner.token]) assert.ok(!line.includes(secret), `token in log: ${line}`);
    }
  });
});
