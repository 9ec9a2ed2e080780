// Real-time token authorization (first half): eMSP -> hub -> CPO, synchronous, with the
// interface document's Errors rows. Real ingress and projector processes, real Kafka and Postgres,
// the CPO a real HTTP server.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { call, createTestStack, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { freePort, hubctl, onboard, type OnboardedPlatform } from './helpers.ts';

type Json = Record<string, unknown>;
const examples = new URL('../../shared/ocpi-2.2.1/examples/', import.meta.url);
const location = JSON.parse(readFileSync(new URL('location_example.json', examples), 'utf8')) as Json; // BE/BEC/LOC1

describe('token authorization forwarded to the CPO', () => {
  let stack: TestStack;
  let ingress: ServiceProcess;
  let projector: ServiceProcess;
  let hub: string;
  let env: Record<string, string>;
  let cpo: OnboardedPlatform; // BE/BEC, routed
  let other: OnboardedPlatform; // NL/OTH, not routed
  let emsp: OnboardedPlatform; // DE/EMA
  const to = (cc: string, pid: string) => ({ 'OCPI-to-country-code': cc, 'OCPI-to-party-id': pid });
  const authorize = (uid: string, options: { headers?: Record<string, string>; body?: unknown; token?: string; path?: string } = {}) =>
    call<Json>(hub, 'PUT', options.path ?? `/ocpi/2.2.1/tokens/DE/EMA/${uid}/authorize`, { token: options.token ?? emsp.token, ...(options.body === undefined ? {} : { body: options.body }), headers: options.headers ?? {} });

  before(async () => {
    stack = await createTestStack('tokens');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', AUTHORIZE_TIMEOUT_MS: '700' });
    ingress = await startService('ingress', env, /ingress listening/);
    projector = await startService('projector', env, /projector running/, 60_000);
    const cpoModules = [{ identifier: 'credentials', role: 'SENDER' as const }, { identifier: 'tokens', role: 'RECEIVER' as const }];
    cpo = await onboard(hub, env, 'CPO', [{ role: 'CPO', countryCode: 'BE', partyId: 'BEC' }], cpoModules);
    other = await onboard(hub, env, 'Other CPO', [{ role: 'CPO', countryCode: 'NL', partyId: 'OTH' }], cpoModules);
    emsp = await onboard(hub, env, 'eMSP', [{ role: 'EMSP', countryCode: 'DE', partyId: 'EMA' }]);
    assert.equal((await hubctl(env, ['routing', 'enable', '--emsp', 'DE/EMA', '--cpo', 'BE/BEC'])).code, 0);
    assert.equal((await call(hub, 'PUT', '/ocpi/2.2.1/locations/BE/BEC/LOC1', { token: cpo.token, body: location })).body.status_code, 1000);
    await call(hub, 'GET', '/ocpi/2.2.1/locations/BE/BEC/LOC1', { token: cpo.token }); // projected
  });

  after(async () => {
    await Promise.allSettled([ingress?.stop(), projector?.stop(), cpo?.partner.close(), other?.partner.close(), emsp?.partner.close()]);
    await stack?.cleanup();
  });

  it("returns the CPO's answer unchanged (ALLOWED, BLOCKED, NOT_ALLOWED), routed by the OCPI-to headers", async () => {
    for (const answer of ['ALLOWED', 'BLOCKED', 'NOT_ALLOWED'] as const) {
      cpo.partner.authorizeAnswer = answer;
      const res = await authorize('TOKEN-1', { headers: { ...to('BE', 'BEC'), 'X-Correlation-ID': `corr-${answer}`, 'X-Request-ID': `req-${answer}` } });
      assert.equal(res.status, 200);
      assert.equal(res.body.status_code, 1000);
      assert.equal(res.body.data?.['allowed'], answer);
      assert.equal((res.body.data?.['token'] as Json)['uid'], 'TOKEN-1');
      const forwarded = cpo.partner.requests.filter((r) => r.method === 'PUT').at(-1);
      assert.equal(forwarded?.path, '/ocpi/2.2.1/tokens/DE/EMA/TOKEN-1/authorize');
      assert.equal(forwarded?.headers['authorization'], `Token ${Buffer.from(cpo.partner.token).toString('base64')}`);
      assert.equal(forwarded?.headers['x-correlation-id'], `corr-${answer}`);
      assert.notEqual(forwarded?.headers['x-request-id'], `req-${answer}`);
      assert.equal(forwarded?.headers['ocpi-from-party-id'], 'EMA');
      assert.equal(forwarded?.headers['ocpi-to-party-id'], 'BEC');
    }
  });

  it('without routing headers the CPO is the owner of the location in the body', async () => {
    cpo.partner.authorizeAnswer = 'ALLOWED';
    const res = await authorize('TOKEN-2', { body: { location_id: 'LOC1', evse_uids: ['3256'] } });
    assert.equal(res.body.status_code, 1000, JSON.stringify(res.body));
    assert.deepEqual(res.body.data?.['location'], { location_id: 'LOC1', evse_uids: ['3256'] });
    assert.deepEqual(cpo.partner.requests.at(-1)?.body, { location_id: 'LOC1', evse_uids: ['3256'] });
  });

  it('CPO unreachable, timing out, answering garbage or not knowing the token: result UNKNOWN', async () => {
    cpo.partner.authorizeAnswer = 'hang';
    const started = Date.now();
    const timeout = await authorize('TOKEN-3', { headers: to('BE', 'BEC') });
    assert.equal(timeout.body.status_code, 4002);
    assert.equal(timeout.body.data?.['allowed'], 'UNKNOWN');
    assert.ok(Date.now() - started < 3_000, 'bounded by AUTHORIZE_TIMEOUT_MS');
    cpo.partner.authorizeAnswer = 'garbage';
    const garbage = await authorize('TOKEN-3', { headers: to('BE', 'BEC') });
    assert.equal(garbage.body.status_code, 4000);
    assert.equal(garbage.body.data?.['allowed'], 'UNKNOWN');
    cpo.partner.authorizeAnswer = 'unknown-token';
    const unknownToken = await authorize('TOKEN-3', { headers: to('BE', 'BEC') });
    assert.equal(unknownToken.body.status_code, 2004, 'the CPO error is forwarded');
    assert.equal(unknownToken.body.data?.['allowed'], 'UNKNOWN');
    await cpo.partner.goDown();
    const down = await authorize('TOKEN-3', { headers: to('BE', 'BEC') });
    assert.equal(down.body.status_code, 4003);
    assert.equal(down.body.data?.['allowed'], 'UNKNOWN');
    await cpo.partner.comeUp();
    cpo.partner.authorizeAnswer = 'ALLOWED';
    assert.equal((await authorize('TOKEN-3', { headers: to('BE', 'BEC') })).body.data?.['allowed'], 'ALLOWED');
    const metrics = await (await fetch(`http://127.0.0.1:${/"operatorPort":(\d+)/.exec(ingress.logs.find((l) => l.includes('ingress listening')) ?? '')?.[1]}/metrics`)).text();
    assert.match(metrics, /hub_authorizations_total\{outcome="forward_timeout",service="ingress"\} 1/);
  });

  it('no target, unknown location, unrouted CPO and foreign eMSP are refused with the matching code', async () => {
    assert.equal((await authorize('TOKEN-4')).body.status_code, 2002);
    assert.equal((await authorize('TOKEN-4', { body: { location_id: 'NOPE' } })).body.status_code, 2003);
    const unrouted = await authorize('TOKEN-4', { headers: to('NL', 'OTH') });
    assert.equal(unrouted.body.status_code, 4001);
    assert.match(unrouted.body.status_message ?? '', /no active routing rule/);
    assert.equal(other.partner.requests.filter((r) => r.method === 'PUT').length, 0, 'nothing forwarded without a rule');
    assert.equal((await authorize('TOKEN-4', { headers: to('XX', 'ZZZ') })).body.status_code, 4001);
    const foreign = await authorize('TOKEN-4', { path: '/ocpi/2.2.1/tokens/NL/XYZ/TOKEN-4/authorize', headers: to('BE', 'BEC') });
    assert.equal(foreign.status, 403);
    assert.equal((await authorize('TOKEN-4', { headers: to('BE', 'BEC'), body: { location_id: 'LOC1', bogus: 1 } })).body.status_code, 2001);
  });

  it('authorizations are limited to the configured rate per party across two ingress replicas', async () => {
    const ports = [await freePort(), await freePort()];
    const replicas = await Promise.all(ports.map((p) => startService('ingress', { ...env, HUB_PORT: String(p), OPERATOR_PORT: '0', RATE_LIMIT_AUTHORIZATIONS: '4' }, /ingress listening/)));
    const fresh = await onboard(hub, env, 'eMSP limited', [{ role: 'EMSP', countryCode: 'DE', partyId: 'LIM' }]);
    assert.equal((await hubctl(env, ['routing', 'enable', '--emsp', 'DE/LIM', '--cpo', 'BE/BEC'])).code, 0);
    try {
      const toNextMinute = 60_000 - (Date.now() % 60_000);
      if (toNextMinute < 5_000) await new Promise((r) => setTimeout(r, toNextMinute + 100));
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const res = await call(`http://127.0.0.1:${ports[i % 2]}`, 'PUT', '/ocpi/2.2.1/tokens/DE/LIM/T/authorize', { token: fresh.token, headers: to('BE', 'BEC') });
        statuses.push(res.status);
        if (res.status === 429) assert.ok(Number(res.headers['retry-after']) >= 1);
      }
      assert.deepEqual(statuses, [200, 200, 200, 200, 429]);
    } finally {
      await Promise.all(replicas.map((r) => r.stop()));
      await fresh.partner.close();
    }
  });
});
