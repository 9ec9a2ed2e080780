// CPO-initiated real-time authorization (mod_tokens.asciidoc, Sender interface, POST
// and Real-time authorization): CPO -> hub -> eMSP, synchronous, with the faults answered as the
// eMSP-initiated direction answers them (interface document, Errors). Real ingress and projector
// processes, real Kafka and Postgres; the eMSPs are real HTTP servers (partner simulators).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newEvent, tokenEventTypes, topics } from '@hub/events';
import { objectKey, pathSubject, tokenObjectId } from '@hub/modules';
import { call, createTestStack, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { assertValid, freePort, hubctl, onboard, until, type OnboardedPlatform } from './helpers.ts';

type Json = Record<string, unknown>;

describe('token authorization asked by a CPO, forwarded to the eMSP', () => {
  let stack: TestStack;
  let ingress: ServiceProcess;
  let projector: ServiceProcess;
  let hub: string;
  let cpo: OnboardedPlatform; // BE/BEC, routed to both eMSPs
  let ema: OnboardedPlatform; // DE/EMA: owns TOKEN-A and SHARED
  let emb: OnboardedPlatform; // DE/EMB: owns SHARED and APP-1 (APP_USER)
  const to = (cc: string, pid: string) => ({ 'OCPI-to-country-code': cc, 'OCPI-to-party-id': pid });
  const authorize = (uid: string, options: { headers?: Record<string, string>; body?: unknown; token?: string; query?: string } = {}) =>
    call<Json>(hub, 'POST', `/ocpi/2.2.1/tokens/${uid}/authorize${options.query ?? ''}`, { token: options.token ?? cpo.token, ...(options.body === undefined ? {} : { body: options.body }), headers: options.headers ?? {} });
  const asked = (p: OnboardedPlatform) => p.partner.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/authorize'));

  /** A token the eMSP pushed, appended as the ingress appends a token PUT (ocpi.tokens.v1). */
  const pushed = (countryCode: string, partyId: string, uid: string, type = 'RFID') => {
    const path = { countryCode, partyId, id: tokenObjectId(uid, type) };
    const data = { country_code: countryCode, party_id: partyId, uid, type, contract_id: `${countryCode}-${partyId}-${uid}`, issuer: partyId, valid: true, whitelist: 'NEVER', last_updated: '2026-01-01T00:00:00Z' };
    return newEvent({ type: tokenEventTypes.tokenPut, source: 'test', subject: pathSubject(path), key: objectKey(path), data, from: `${countryCode}/${partyId}` });
  };

  before(async () => {
    stack = await createTestStack('token_authorize_cpo');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    const env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', AUTHORIZE_TIMEOUT_MS: '700' });
    ingress = await startService('ingress', env, /ingress listening/);
    projector = await startService('projector', env, /projector running/, 60_000);
    // An eMSP offers real-time authorization on its tokens SENDER interface (mod_tokens.asciidoc).
    const emspModules = [{ identifier: 'credentials', role: 'SENDER' as const }, { identifier: 'tokens', role: 'SENDER' as const }];
    cpo = await onboard(hub, env, 'CPO', [{ role: 'CPO', countryCode: 'BE', partyId: 'BEC' }]);
    ema = await onboard(hub, env, 'eMSP A', [{ role: 'EMSP', countryCode: 'DE', partyId: 'EMA' }], emspModules);
    emb = await onboard(hub, env, 'eMSP B', [{ role: 'EMSP', countryCode: 'DE', partyId: 'EMB' }], emspModules);
    for (const e of ['DE/EMA', 'DE/EMB']) assert.equal((await hubctl(env, ['routing', 'enable', '--emsp', e, '--cpo', 'BE/BEC'])).code, 0);
    await stack.eventLog.append(topics.tokens, [pushed('DE', 'EMA', 'TOKEN-A'), pushed('DE', 'EMA', 'SHARED'), pushed('DE', 'EMB', 'SHARED'), pushed('DE', 'EMB', 'APP-1', 'APP_USER')]);
    await until('the projector applied the four tokens', async () => (await stack.pool.query<{ n: string }>('select count(*) as n from tokens')).rows[0]?.n === '4');
  });

  after(async () => {
    await Promise.allSettled([ingress?.stop(), projector?.stop(), cpo?.partner.close(), ema?.partner.close(), emb?.partner.close()]);
    await stack?.cleanup();
  });

  it("forwards to the eMSP that pushed the token and returns its AuthorizationInfo unchanged", async () => {
    for (const answer of ['ALLOWED', 'BLOCKED', 'NOT_ALLOWED'] as const) {
      ema.partner.authorizeAnswer = answer;
      const body = { location_id: 'LOC1', evse_uids: ['3256'] };
      const res = await authorize('TOKEN-A', { body, headers: { 'X-Correlation-ID': `corr-${answer}` } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.status_code, 1000);
      const token = { country_code: 'DE', party_id: 'EMA', uid: 'TOKEN-A', type: 'RFID', contract_id: 'X', issuer: 'sim', valid: true, whitelist: 'NEVER', last_updated: '2020-01-01T00:00:00Z' };
      assert.deepEqual(res.body.data, { allowed: answer, token, authorization_reference: 'sim-TOKEN-A', location: body }, 'the eMSP answer, unchanged');
      const forwarded = asked(ema).at(-1);
      assert.equal(forwarded?.path, '/ocpi/2.2.1/tokens/TOKEN-A/authorize');
      assert.deepEqual(forwarded?.body, body);
      assert.equal(forwarded?.headers['authorization'], `Token ${Buffer.from(ema.partner.token).toString('base64')}`);
      assert.equal(forwarded?.headers['x-correlation-id'], `corr-${answer}`);
      assert.deepEqual(
        ['ocpi-from-country-code', 'ocpi-from-party-id', 'ocpi-to-country-code', 'ocpi-to-party-id'].map((h) => forwarded?.headers[h]),
        ['BE', 'BEC', 'DE', 'EMA'],
      );
    }
    assert.equal(asked(emb).length, 0, 'the other eMSP is not asked');
  });

  it('completes an answer without the required token with the Token the eMSP pushed; 4000 with UNKNOWN for a token it never pushed', async () => {
    ema.partner.authorizeAnswer = 'allowed-without-token';
    try {
      const res = await authorize('TOKEN-A');
      assert.equal(res.body.status_code, 1000, res.text);
      // mod_tokens.asciidoc, AuthorizationInfo object: token is required in 2.2.1.
      await assertValid('ocpi/authorization_info.json', res.body.data);
      assert.deepEqual(res.body.data, { allowed: 'ALLOWED', token: pushed('DE', 'EMA', 'TOKEN-A').data });
      const unpushed = await authorize('NOT-PUSHED', { headers: to('DE', 'EMA') });
      // docs/reference/version-mapping.md, AuthorizationInfo: no Token is made up; the answer is unusable.
      assert.equal(unpushed.status, 200, unpushed.text);
      assert.equal(unpushed.body.status_code, 4000);
      assert.deepEqual(unpushed.body.data, { allowed: 'UNKNOWN' });
      assert.match(String(unpushed.body.status_message), /answered without the Token/);
    } finally {
      ema.partner.authorizeAnswer = 'ALLOWED';
    }
  });

  it('the owner from the read model, or the eMSP the OCPI-to headers name; unknown token 2004, ambiguous 2002', async () => {
    ema.partner.authorizeAnswer = 'ALLOWED';
    const before = asked(emb).length;
    const ambiguous = await authorize('SHARED');
    assert.equal(ambiguous.body.status_code, 2002, ambiguous.text);
    const named = await authorize('SHARED', { headers: to('DE', 'EMB') });
    assert.equal(named.body.data?.['allowed'], 'ALLOWED', named.text);
    assert.equal(asked(emb).at(-1)?.headers['ocpi-to-party-id'], 'EMB');
    const app = await authorize('APP-1', { query: '?type=APP_USER' });
    assert.equal((app.body.data?.['token'] as Json | undefined)?.['type'], 'APP_USER', app.text);
    assert.equal(asked(emb).length, before + 2);
    // A uid is unique per type only (RFID when omitted); a token nobody pushed: 404 with 2004, no data.
    for (const res of [await authorize('APP-1'), await authorize('NOBODY-HAS-IT')]) {
      assert.equal(res.status, 404);
      assert.equal(res.body.status_code, 2004);
      assert.equal('data' in res.body, false);
    }
    assert.equal(asked(emb).length, before + 2, 'nothing forwarded for an unknown token');
    // OCPI-to reaches an eMSP for a token it never pushed (real-time only tokens).
    const unpushed = await authorize('NOT-PUSHED', { headers: to('DE', 'EMA') });
    assert.equal(unpushed.body.data?.['allowed'], 'ALLOWED', unpushed.text);
  });

  it('eMSP timing out (4002), answering garbage (4000), unreachable (4003): UNKNOWN; an eMSP 404 is 2004', async () => {
    ema.partner.authorizeAnswer = 'hang';
    const started = Date.now();
    const timeout = await authorize('TOKEN-A');
    assert.equal(timeout.body.status_code, 4002, timeout.text);
    assert.deepEqual(timeout.body.data, { allowed: 'UNKNOWN' });
    assert.ok(Date.now() - started < 3_000, 'bounded by AUTHORIZE_TIMEOUT_MS');
    ema.partner.authorizeAnswer = 'garbage';
    const garbage = await authorize('TOKEN-A');
    assert.equal(garbage.body.status_code, 4000, garbage.text);
    assert.deepEqual(garbage.body.data, { allowed: 'UNKNOWN' });
    ema.partner.authorizeAnswer = 'unknown-token';
    const unknown = await authorize('TOKEN-A');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.status_code, 2004);
    await ema.partner.goDown();
    const down = await authorize('TOKEN-A');
    assert.equal(down.body.status_code, 4003, down.text);
    assert.deepEqual(down.body.data, { allowed: 'UNKNOWN' });
    await ema.partner.comeUp();
    ema.partner.authorizeAnswer = 'ALLOWED';
    assert.equal((await authorize('TOKEN-A')).body.data?.['allowed'], 'ALLOWED');
    const operatorPort = /"operatorPort":(\d+)/.exec(ingress.logs.find((l) => l.includes('ingress listening')) ?? '')?.[1];
    const metrics = await (await fetch(`http://127.0.0.1:${operatorPort}/metrics`)).text();
    assert.match(metrics, /hub_authorizations_total\{outcome="forward_timeout",direction="cpo_to_emsp",service="ingress"\} 1/);
  });

  it('only a CPO asks: eMSP credentials are refused (403), nothing forwarded', async () => {
    const before = asked(ema).length;
    const res = await authorize('TOKEN-A', { token: ema.token });
    assert.equal(res.status, 403);
    assert.equal(res.body.status_code, 2000);
    assert.equal(asked(ema).length, before);
  });
});
