// Commands from an OCPI 2.3.0 eMSP (ocpi-2.3.0/mod_commands.asciidoc; docs/reference/version-mapping.md,
// Commands): each of the five reaches CPOs of 2.3.0, 2.2.1 and 2.1.1 valid in the CPO's version, the
// CPO's answer comes back as a 2.3.0 CommandResponse and its result reaches the eMSP's response_url as
// a 2.3.0 CommandResult; CANCEL_RESERVATION, which 2.1.1 lacks, is NOT_SUPPORTED there. Real ingress,
// projector and dispatcher processes, real Kafka and Postgres.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, createTestStack, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { assertValid, example230, freePort, onboard, onboard211, onboard230, routeEvery, until, type OnboardedPlatform } from './helpers.ts';

type Json = Record<string, unknown>;

describe('OCPI 2.3.0 commands to CPOs of every version', () => {
  let stack: TestStack;
  let services: ServiceProcess[] = [];
  let hub: string;
  let env: Record<string, string>;
  let emsp230: OnboardedPlatform;
  let cpo230: OnboardedPlatform;
  let cpo221: OnboardedPlatform;
  let cpo211: OnboardedPlatform;
  let emsp211: OnboardedPlatform;
  // A 2.3.0 Token (mod_tokens.asciidoc) with an extension member, which a CPO of another version must not get.
  const token = { country_code: 'NL', party_id: 'TST', uid: 'T1', type: 'RFID', contract_id: 'NL-TST-C00000001-1', issuer: 'eMSP 2.3.0', valid: true, whitelist: 'ALLOWED', last_updated: '2026-01-01T00:00:00Z', x_loyalty: 'gold' };

  before(async () => {
    stack = await createTestStack('ocpi230-commands');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1' });
    services = await Promise.all([
      startService('ingress', env, /ingress listening/),
      startService('projector', env, /projector running/),
      startService('dispatcher', env, /dispatcher running/),
    ]);
    const cpoModules = [{ identifier: 'credentials', role: 'SENDER' as const }, { identifier: 'commands', role: 'RECEIVER' as const }];
    emsp230 = await onboard230(hub, env, 'eMSP 2.3.0', { role: 'EMSP', countryCode: 'NL', partyId: 'TST' });
    cpo230 = await onboard230(hub, env, 'CPO 2.3.0', { role: 'CPO', countryCode: 'BE', partyId: 'BEC' }, cpoModules);
    cpo221 = await onboard(hub, env, 'CPO 2.2.1', [{ role: 'CPO', countryCode: 'NL', partyId: 'NEW' }], cpoModules);
    cpo211 = await onboard211(hub, env, 'CPO 2.1.1', { role: 'CPO', countryCode: 'FR', partyId: 'OLD' }, cpoModules);
    emsp211 = await onboard211(hub, env, 'eMSP 2.1.1', { role: 'EMSP', countryCode: 'IT', partyId: 'EMO' });
    await routeEvery(env, ['NL/TST'], ['BE/BEC', 'NL/NEW', 'FR/OLD']);
    await routeEvery(env, ['IT/EMO'], ['BE/BEC']);
  });

  after(async () => {
    await Promise.allSettled([...services.map((s) => s.stop()), ...[emsp230, cpo230, cpo221, cpo211, emsp211].map((p) => p?.partner.close())]);
    await stack?.cleanup();
  });

  const to = (cpo: string) => {
    const [cc, pid] = cpo.split('/');
    return { 'OCPI-to-country-code': cc ?? '', 'OCPI-to-party-id': pid ?? '' };
  };
  const url = (id: string) => `${emsp230.partner.baseUrl}/ocpi/2.3.0/command-results/${id}`;
  const commands = (id: string): Array<[string, Json]> => [
    ['START_SESSION', { response_url: url(`start-${id}`), token, location_id: 'LOC1', evse_uid: '3256' }],
    ['STOP_SESSION', { response_url: url(`stop-${id}`), session_id: 'S1' }],
    ['RESERVE_NOW', { response_url: url(`reserve-${id}`), token, expiry_date: '2026-11-26T20:00:00Z', reservation_id: '42', location_id: 'LOC1' }],
    ['UNLOCK_CONNECTOR', { response_url: url(`unlock-${id}`), location_id: 'LOC1', evse_uid: '3256', connector_id: '1' }],
    ['CANCEL_RESERVATION', { response_url: url(`cancel-${id}`), reservation_id: '42' }],
  ];
  const schemaDir = { '2.3.0': 'ocpi-2.3.0', '2.2.1': 'ocpi', '2.1.1': 'ocpi-2.1.1' } as const;

  for (const [version, party] of [['2.3.0', 'BE/BEC'], ['2.2.1', 'NL/NEW'], ['2.1.1', 'FR/OLD']] as const) {
    it(`the five commands from the 2.3.0 eMSP reach the ${version} CPO in ${version}; answers and results come back in 2.3.0`, async () => {
      const cpo = version === '2.3.0' ? cpo230 : version === '2.2.1' ? cpo221 : cpo211;
      cpo.partner.commandAnswer = 'ACCEPTED';
      cpo.partner.commandResult = 'ACCEPTED';
      const id = version.replaceAll('.', '');
      for (const [command, body] of commands(id)) {
        await assertValid(`ocpi-2.3.0/${command.toLowerCase()}.json`, body);
        const before = cpo.partner.commands.length;
        const res = await call<Json>(hub, 'POST', `/ocpi/2.3.0/commands/${command}`, { token: emsp230.token, headers: to(party), body });
        assert.equal(res.body.status_code, 1000, `${command}: ${res.text}`);
        await assertValid('ocpi-2.3.0/command_response.json', res.body.data);
        if (command === 'CANCEL_RESERVATION' && version === '2.1.1') {
          assert.equal(res.body.data?.['result'], 'NOT_SUPPORTED', '2.1.1 has no CANCEL_RESERVATION');
          assert.equal(cpo.partner.commands.length, before, 'not forwarded');
          continue;
        }
        assert.equal(res.body.data?.['result'], 'ACCEPTED', `${command}: ${res.text}`);
        const atCpo = cpo.partner.commands.at(-1);
        assert.equal(atCpo?.command, command);
        await assertValid(`${schemaDir[version]}/${command.toLowerCase()}.json`, atCpo?.body);
        assert.match(String(atCpo?.body['response_url']), new RegExp(`/ocpi/${version.replaceAll('.', '\\.')}/commands/callback/`));
        if (version !== '2.3.0') assert.ok(!JSON.stringify(atCpo?.body).includes('x_loyalty'), `${command}: no 2.3.0 extension for a ${version} CPO`);
      }
      for (const [command] of commands(id)) {
        if (command === 'CANCEL_RESERVATION' && version === '2.1.1') continue;
        const suffix = `/${command === 'START_SESSION' ? 'start' : command === 'STOP_SESSION' ? 'stop' : command === 'RESERVE_NOW' ? 'reserve' : command === 'UNLOCK_CONNECTOR' ? 'unlock' : 'cancel'}-${id}`;
        const result = await until(`${command} result at the eMSP`, () => emsp230.partner.received.find((r) => r.kind === 'command_result' && r.path.endsWith(suffix)), 30_000);
        await assertValid('ocpi-2.3.0/command_result.json', result.body);
        assert.equal(result.body['result'], 'ACCEPTED', command);
      }
    });
  }

  it("a 2.1.1 eMSP's START_SESSION at a 2.3.0 CPO's Location reaches the CPO as valid 2.3.0; the answer and the result come back in 2.1.1", async () => {
    // 2.1.1 names no receiving party (no OCPI-to headers): the hub finds the CPO by the Location.
    const location: Json = { ...example230('location_example.json'), country_code: 'BE', party_id: 'BEC', id: 'LOC-230' };
    const pushed = await call(hub, 'PUT', '/ocpi/2.3.0/locations/BE/BEC/LOC-230', { token: cpo230.token, body: location });
    assert.equal(pushed.body.status_code, 1000, pushed.text);
    cpo230.partner.commandAnswer = 'ACCEPTED';
    cpo230.partner.commandResult = 'ACCEPTED';
    const evseUid = String(((location['evses'] as Json[])[0] as Json)['uid']);
    const start211 = {
      response_url: `${emsp211.partner.baseUrl}/ocpi/2.1.1/command-results/start-211`,
      token: { uid: 'EMO1', type: 'RFID', auth_id: 'IT-EMO-C00000001-1', issuer: 'eMSP 2.1.1', valid: true, whitelist: 'ALLOWED', last_updated: '2026-11-26T09:00:00Z' },
      location_id: 'LOC-230',
      evse_uid: evseUid,
    };
    await assertValid('ocpi-2.1.1/start_session.json', start211);
    const before = cpo230.partner.commands.length;
    // The CPO's own read waits for the projection of its push (read-your-writes).
    assert.equal((await call(hub, 'GET', '/ocpi/2.3.0/locations/BE/BEC/LOC-230', { token: cpo230.token })).body.status_code, 1000);
    const res = await call<Json>(hub, 'POST', '/ocpi/2.1.1/commands/START_SESSION', { token: emsp211.token, body: start211 });
    assert.equal(res.body.status_code, 1000, res.text);
    await assertValid('ocpi-2.1.1/command_response.json', res.body.data);
    assert.equal(res.body.data?.['result'], 'ACCEPTED', res.text);
    assert.equal(cpo230.partner.commands.length, before + 1);
    const atCpo = cpo230.partner.commands.at(-1);
    await assertValid('ocpi-2.3.0/start_session.json', atCpo?.body);
    assert.deepEqual([(atCpo?.body['token'] as Json)['country_code'], (atCpo?.body['token'] as Json)['contract_id']], ['IT', 'IT-EMO-C00000001-1']);
    assert.match(String(atCpo?.body['response_url']), /\/ocpi\/2\.3\.0\/commands\/callback\//);
    const result = await until('the result at the 2.1.1 eMSP', () => emsp211.partner.received.find((r) => r.kind === 'command_result' && r.path.endsWith('/start-211')), 30_000);
    await assertValid('ocpi-2.1.1/command_response.json', result.body);
    assert.equal(result.body['result'], 'ACCEPTED');
  });

  it('refusals in 2.3.0: an unknown command and a body of the wrong form are 2001; a 2.2.1 caller cannot use the 2.3.0 URL', async () => {
    const unknown = await call(hub, 'POST', '/ocpi/2.3.0/commands/FLY', { token: emsp230.token, headers: to('BE/BEC'), body: {} });
    assert.equal(unknown.body.status_code, 2001, unknown.text);
    const wrong = await call(hub, 'POST', '/ocpi/2.3.0/commands/STOP_SESSION', { token: emsp230.token, headers: to('BE/BEC'), body: { response_url: url('x') } });
    assert.equal(wrong.body.status_code, 2001, wrong.text);
    const foreign = await call(hub, 'POST', '/ocpi/2.3.0/commands/STOP_SESSION', { token: cpo221.token, body: { response_url: url('y'), session_id: 'S1' } });
    assert.equal(foreign.status, 404);
  });

  it('nothing the hub sent the 2.1.1 CPO breaks the 2.1.1 schemas', () => {
    assert.ok(cpo211.partner.commands.length > 0);
    assert.deepEqual(cpo211.partner.violations211, []);
  });
});
