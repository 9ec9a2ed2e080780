// Bad input never crashes the ingress and always gets an OCPI envelope with the right HTTP and OCPI
// status (OCPI 2.2.1 status_codes.asciidoc; transport_and_format.asciidoc, Authorization header).
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { request } from 'undici';
import { after, before, describe, it } from 'node:test';
import { call, createTestStack, startPartnerSimulator, startService, type PartnerSimulator, type ServiceProcess, type TestStack } from '@hub/testing';
import { freePort, hubctl } from './helpers.ts';

describe('refusals at the partner API', () => {
  let stack: TestStack;
  let ingress: ServiceProcess;
  let partner: PartnerSimulator;
  let hub: string;
  let env: Record<string, string>;
  let initialToken = '';
  let hubToken = '';
  const roles = [{ role: 'EMSP', country_code: 'BE', party_id: 'EMP', business_details: { name: 'Refusal eMSP' } }];

  before(async () => {
    stack = await createTestStack('refusals');
    partner = await startPartnerSimulator();
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', MAX_BODY_BYTES: '65536' });
    ingress = await startService('ingress', env, /ingress listening/);
    const out = await hubctl(env, ['party', 'register', '--role', 'EMSP', '--country', 'BE', '--party', 'EMP', '--name', 'Refusal eMSP', '--json']);
    initialToken = (JSON.parse(out.stdout) as { initial_token: string }).initial_token;
  });

  after(async () => {
    await Promise.allSettled([ingress?.stop(), partner?.close()]);
    await stack?.cleanup();
  });

  const expectEnvelope = (res: { status: number; body: { status_code: number; timestamp: string } }, http: number, ocpi: number) => {
    assert.equal(res.status, http);
    assert.equal(res.body.status_code, ocpi);
    assert.match(res.body.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  };

  it('no Authorization header: HTTP 401 with an envelope', async () => {
    expectEnvelope(await call(hub, 'GET', '/ocpi/versions'), 401, 2000);
  });

  it('a header that is not "Token <value>": HTTP 401', async () => {
    expectEnvelope(await call(hub, 'GET', '/ocpi/versions', { headers: { authorization: `Bearer ${initialToken}` } }), 401, 2000);
  });

  it('an unknown token: HTTP 401, Base64 or raw', async () => {
    expectEnvelope(await call(hub, 'GET', '/ocpi/versions', { token: 'not-a-token-we-issued' }), 401, 2000);
    expectEnvelope(await call(hub, 'GET', '/ocpi/versions', { token: 'not-a-token-we-issued', encoding: 'raw' }), 401, 2000);
  });

  it('the token is accepted Base64-encoded (OCPI 2.2.1) and raw (older peers)', async () => {
    expectEnvelope(await call(hub, 'GET', '/ocpi/versions', { token: initialToken, encoding: 'base64' }), 200, 1000);
    expectEnvelope(await call(hub, 'GET', '/ocpi/versions', { token: initialToken, encoding: 'raw' }), 200, 1000);
  });

  it('the initial token on a module other than versions and credentials: HTTP 401', async () => {
    expectEnvelope(await call(hub, 'GET', '/ocpi/2.2.1/hubclientinfo', { token: initialToken }), 401, 2000);
  });

  it('PUT and DELETE credentials before registration: HTTP 405', async () => {
    expectEnvelope(await call(hub, 'PUT', '/ocpi/2.2.1/credentials', { token: initialToken, body: { token: partner.token, url: partner.versionsUrl, roles } }), 405, 2000);
    expectEnvelope(await call(hub, 'DELETE', '/ocpi/2.2.1/credentials', { token: initialToken }), 405, 2000);
  });

  it('malformed JSON: HTTP 400', async () => {
    expectEnvelope(await call(hub, 'POST', '/ocpi/2.2.1/credentials', { token: initialToken, rawBody: '{"token": "abc", ' }), 400, 2001);
    expectEnvelope(await call(hub, 'POST', '/ocpi/2.2.1/credentials', { token: initialToken, rawBody: 'not json at all' }), 400, 2001);
  });

  it('wrong types and missing fields: OCPI 2001 naming what was wrong, nothing registered', async () => {
    const res = await call<Array<{ path: string; message: string }>>(hub, 'POST', '/ocpi/2.2.1/credentials', {
      token: initialToken,
      body: { token: 42, url: partner.versionsUrl, roles: 'EMSP' },
    });
    expectEnvelope(res, 200, 2001);
    assert.match(res.body.status_message ?? '', /\/token: must be string/);
    assert.deepEqual(res.body.data?.map((v) => v.path).sort(), ['/roles', '/token']);
    const missing = await call(hub, 'POST', '/ocpi/2.2.1/credentials', { token: initialToken, body: { url: partner.versionsUrl, roles } });
    expectEnvelope(missing, 200, 2001);
    assert.match(missing.body.status_message ?? '', /\/: required field token missing/);
    const { rows } = await stack.pool.query<{ registered_at: Date | null }>('select registered_at from platforms');
    assert.equal(rows[0]?.registered_at, null);
  });

  it('unknown fields are refused by name', async () => {
    const res = await call(hub, 'POST', '/ocpi/2.2.1/credentials', { token: initialToken, body: { token: partner.token, url: partner.versionsUrl, roles, admin: true } });
    expectEnvelope(res, 200, 2001);
    assert.match(res.body.status_message ?? '', /unknown field "admin"/);
  });

  it('roles that are not the ones registered for the token: OCPI 2001', async () => {
    const res = await call(hub, 'POST', '/ocpi/2.2.1/credentials', {
      token: initialToken,
      body: { token: partner.token, url: partner.versionsUrl, roles: [{ role: 'CPO', country_code: 'NL', party_id: 'XYZ', business_details: { name: 'Impostor' } }] },
    });
    expectEnvelope(res, 200, 2001);
    assert.match(res.body.status_message ?? '', /roles must be exactly the parties registered/);
  });

  it('an oversized body: HTTP 413 with an envelope', async () => {
    const res = await call(hub, 'POST', '/ocpi/2.2.1/credentials', {
      token: initialToken,
      body: { token: partner.token, url: partner.versionsUrl, roles, padding: 'x'.repeat(70_000) },
    });
    expectEnvelope(res, 413, 2001);
  });

  it('a versions URL the hub may not call (private address, plain http elsewhere): OCPI 2001, nothing fetched', async () => {
    const before = partner.requests.length;
    for (const url of ['http://169.254.169.254/ocpi/versions', 'http://10.1.2.3/ocpi/versions', 'ftp://example.com/versions']) {
      const res = await call(hub, 'POST', '/ocpi/2.2.1/credentials', { token: initialToken, body: { token: partner.token, url, roles } });
      expectEnvelope(res, 200, 2001);
      assert.match(res.body.status_message ?? '', /loopback, private or link-local|only https/);
      // A refusal a development switch would lift names the switch (a calm, honest start).
      if (!url.startsWith('ftp:')) assert.match(res.body.status_message ?? '', /PARTNER_ALLOWED_HOSTS/, url);
    }
    assert.equal(partner.requests.length, before);
  });

  it('a partner that does not answer or lacks 2.2.1: OCPI 3001 / 3002, the initial token still usable', async () => {
    const down = await call(hub, 'POST', '/ocpi/2.2.1/credentials', { token: initialToken, body: { token: partner.token, url: 'http://127.0.0.1:9/ocpi/versions', roles } });
    expectEnvelope(down, 200, 3001);
    partner.versions = ['2.1.1'];
    const old = await call(hub, 'POST', '/ocpi/2.2.1/credentials', { token: initialToken, body: { token: partner.token, url: partner.versionsUrl, roles } });
    expectEnvelope(old, 200, 3002);
    partner.versions = ['2.2.1'];
    const wrongToken = await call(hub, 'POST', '/ocpi/2.2.1/credentials', { token: initialToken, body: { token: 'not-the-partner-token', url: partner.versionsUrl, roles } });
    expectEnvelope(wrongToken, 200, 3001);
  });

  it('two concurrent POSTs with one initial token: exactly one registers', async () => {
    const post = () => call<{ token: string }>(hub, 'POST', '/ocpi/2.2.1/credentials', { token: initialToken, body: { token: partner.token, url: partner.versionsUrl, roles } });
    const results = await Promise.all([post(), post()]);
    const winners = results.filter((r) => r.body.status_code === 1000);
    assert.equal(winners.length, 1, results.map((r) => `${r.status} ${r.text}`).join('\n'));
    const loser = results.find((r) => r.body.status_code !== 1000);
    assert.ok(loser && [401, 405].includes(loser.status), loser?.text);
    hubToken = winners[0]?.body.data?.token ?? '';
    const { rows } = await stack.pool.query<{ n: number }>(`select count(*)::int as n from credentials_tokens where revoked_at is null`);
    assert.equal(rows[0]?.n, 1);
  });

  it('a suspended party is refused (HTTP 403) until reinstated', async () => {
    assert.equal((await hubctl(env, ['party', 'suspend', '--country', 'BE', '--party', 'EMP', '--role', 'EMSP'])).code, 0);
    expectEnvelope(await call(hub, 'GET', '/ocpi/2.2.1/hubclientinfo', { token: hubToken }), 403, 2000);
    assert.equal((await hubctl(env, ['party', 'reinstate', '--country', 'BE', '--party', 'EMP', '--role', 'EMSP'])).code, 0);
    expectEnvelope(await call(hub, 'GET', '/ocpi/2.2.1/hubclientinfo', { token: hubToken }), 200, 1000);
  });

  it('pagination parameters are checked', async () => {
    expectEnvelope(await call(hub, 'GET', '/ocpi/2.2.1/hubclientinfo?offset=-1', { token: hubToken }), 200, 2001);
    expectEnvelope(await call(hub, 'GET', '/ocpi/2.2.1/hubclientinfo?date_from=yesterday', { token: hubToken }), 200, 2001);
    const capped = await call(hub, 'GET', '/ocpi/2.2.1/hubclientinfo?limit=999999', { token: hubToken });
    expectEnvelope(capped, 200, 1000);
    assert.equal(capped.headers['x-limit'], '1000');
    // X-Limit is the limit applied (transport_and_format.asciidoc, Pagination), not the maximum.
    assert.equal((await call(hub, 'GET', '/ocpi/2.2.1/hubclientinfo?limit=2', { token: hubToken })).headers['x-limit'], '2');
  });

  it('unknown paths and methods: 404 / 405 envelopes', async () => {
    expectEnvelope(await call(hub, 'GET', '/ocpi/2.2.1/nothing-here', { token: hubToken }), 404, 2000);
    expectEnvelope(await call(hub, 'PATCH', '/ocpi/2.2.1/credentials', { token: hubToken, body: {} }), 405, 2000);
  });

  // No 500 for bad input; every answer an envelope.
  const raw = async (method: string, path: string, headers: Record<string, string> = {}, body?: Buffer | string) => {
    const res = await request(`${hub}${path}`, { method, headers: { authorization: `Token ${Buffer.from(hubToken).toString('base64')}`, ...headers }, ...(body === undefined ? {} : { body }) });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, body: JSON.parse(text) as { status_code: number; timestamp: string }, text };
  };

  it('a path with a bad percent-encoding: HTTP 400 / 2001', async () => {
    for (const bad of ['%', '%zz', '%E0%A4%A']) {
      expectEnvelope(await raw('GET', `/ocpi/2.2.1/locations/BE/EMP/${bad}`), 400, 2001);
      expectEnvelope(await raw('PUT', `/ocpi/2.2.1/tariffs/BE/EMP/${bad}`, { 'content-type': 'application/json' }, '{}'), 400, 2001);
    }
  });

  it('a Content-Encoding the hub does not support: 415; a body that does not inflate: 400', async () => {
    const json = { 'content-type': 'application/json' };
    expectEnvelope(await raw('PUT', '/ocpi/2.2.1/credentials', { ...json, 'content-encoding': 'compress' }, '{}'), 415, 2001);
    expectEnvelope(await raw('PUT', '/ocpi/2.2.1/credentials', { ...json, 'content-encoding': 'gzip' }, Buffer.from('not gzip at all')), 400, 2001);
    expectEnvelope(await raw('PUT', '/ocpi/2.2.1/credentials', { ...json, 'content-encoding': 'deflate' }, Buffer.from([1, 2, 3, 4, 5])), 400, 2001);
    expectEnvelope(await raw('PUT', '/ocpi/2.2.1/credentials', { ...json, 'content-encoding': 'br' }, Buffer.from([255, 255, 255, 255])), 400, 2001);
  });

  it('OPTIONS and methods a known path does not serve: 405 with Allow; unknown to Node: 400 envelope', async () => {
    const versions = await raw('OPTIONS', '/ocpi/versions');
    expectEnvelope(versions, 405, 2000);
    assert.equal(versions.headers['allow'], 'GET, HEAD');
    const locations = await raw('OPTIONS', '/ocpi/2.2.1/locations/BE/EMP/LOC1');
    expectEnvelope(locations, 405, 2000);
    assert.equal(locations.headers['allow'], 'GET, PUT, PATCH, HEAD');
    expectEnvelope(await raw('PROPFIND', '/ocpi/2.2.1/hubclientinfo'), 405, 2000);
    expectEnvelope(await raw('POST', '/ocpi/2.2.1'), 405, 2000);
    // A method Node's HTTP parser refuses never reaches express: still an envelope, connection closed.
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(hub).port), '127.0.0.1', () => socket.write('FOO /ocpi/versions HTTP/1.1\r\nHost: x\r\n\r\n'));
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    assert.match(answer, /^HTTP\/1\.1 400 /);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { status_code: number; timestamp: string };
    expectEnvelope({ status: 400, body }, 400, 2001);
    assert.equal(ingress.child.exitCode, null, 'ingress still running');
  });

  it('a burst of hostile requests leaves the process up and never answers 500', async () => {
    const bodies = ['', '[]', 'null', '"x"', '{"token":null}', '{"roles":[{}]}', '{'.repeat(5000), '\u0000\u0001', '{"__proto__":{"polluted":1}}'];
    const auths = [undefined, 'Token', 'Token ', `Token ${'A'.repeat(10_000)}`, 'Token ====', `Token ${hubToken}`, 'token x y'];
    for (const body of bodies) {
      for (const authorization of auths) {
        const res = await request(`${hub}/ocpi/2.2.1/credentials`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(authorization === undefined ? {} : { authorization }) },
          body,
        });
        const text = await res.body.text();
        assert.ok(res.statusCode < 500, `HTTP ${res.statusCode} for ${JSON.stringify(body).slice(0, 40)} / ${String(authorization).slice(0, 20)}: ${text}`);
        assert.equal(typeof (JSON.parse(text) as { status_code: unknown }).status_code, 'number');
      }
    }
    assert.equal(ingress.child.exitCode, null, 'ingress still running');
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  });
});
