// Commands, Credentials and version details between OCPI 2.1.1 and the canonical 2.2.1 form.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CommandResult, Credentials, ReserveNow, StartSession, Token, VersionDetails } from '../src/index.ts';
import { adapterFor, isNotRepresentable } from '../src/index.ts';
import type { Ocpi211 } from '../src/index.ts';
import { assertValid, clone, DE_EMS, example211, example221, examples211 } from './examples.ts';

const v211 = adapterFor('2.1.1');
const token211 = (): Ocpi211.Token => clone(example211('mod_tokens.md', 'Example')) as Ocpi211.Token;
const token221 = (): Token => clone(example221('token_example_2_full_rfid.json')) as Token;
const responseUrl = 'https://hub.example/ocpi/emsp/2.1.1/commands/START_SESSION/42';

describe('command requests', () => {
  it('2.1.1 has no CANCEL_RESERVATION; 2.2.1 has every command', () => {
    assert.equal(v211.supportsCommand('CANCEL_RESERVATION'), false);
    for (const type of ['RESERVE_NOW', 'START_SESSION', 'STOP_SESSION', 'UNLOCK_CONNECTOR'] as const) assert.equal(v211.supportsCommand(type), true);
    assert.equal(adapterFor('2.2.1').supportsCommand('CANCEL_RESERVATION'), true);
    assert.throws(() => v211.cancelReservationOut({ response_url: responseUrl, reservation_id: '1' }), isNotRepresentable);
  });

  it('StartSession both ways: the token translates; connector_id and authorization_reference are dropped', () => {
    const sent: Ocpi211.StartSession = { response_url: responseUrl, token: token211(), location_id: 'LOC1', evse_uid: '3256' };
    assertValid('ocpi-2.1.1/start_session.json', sent);
    const canonical = v211.startSessionIn(clone(sent), DE_EMS);
    assertValid('ocpi/start_session.json', canonical);
    assert.deepEqual(v211.startSessionOut(canonical), sent);
    const from221: StartSession = { response_url: responseUrl, token: token221(), location_id: 'LOC1', evse_uid: '3256', connector_id: '1', authorization_reference: 'REF' };
    const out = v211.startSessionOut(from221) as Ocpi211.StartSession;
    assertValid('ocpi-2.1.1/start_session.json', out);
    assert.equal('connector_id' in out || 'authorization_reference' in out, false);
  });

  it('ReserveNow: the 2.1.1 int reservation_id is its decimal string; a non-int one is not representable', () => {
    const sent: Ocpi211.ReserveNow = { response_url: responseUrl, token: token211(), expiry_date: '2026-11-26T18:00:00Z', reservation_id: 1234, location_id: 'LOC1' };
    assertValid('ocpi-2.1.1/reserve_now.json', sent);
    const canonical = v211.reserveNowIn(clone(sent), DE_EMS);
    assertValid('ocpi/reserve_now.json', canonical);
    assert.equal(canonical.reservation_id, '1234');
    assert.deepEqual(v211.reserveNowOut(canonical), sent);
    const reserve = (reservation_id: string): ReserveNow => ({ ...canonical, reservation_id });
    assert.equal((v211.reserveNowOut(reserve('2147483647')) as Ocpi211.ReserveNow).reservation_id, 2147483647);
    for (const id of ['2147483648', 'R-12', '007', '']) assert.throws(() => v211.reserveNowOut(reserve(id)), isNotRepresentable, id);
  });

  it('StopSession and UnlockConnector are the same objects', () => {
    const stop: Ocpi211.StopSession = { response_url: responseUrl, session_id: '101' };
    const unlock: Ocpi211.UnlockConnector = { response_url: responseUrl, location_id: 'LOC1', evse_uid: '3256', connector_id: '1' };
    assertValid('ocpi/stop_session.json', v211.stopSessionIn(stop));
    assertValid('ocpi/unlock_connector.json', v211.unlockConnectorIn(unlock));
    assert.deepEqual(v211.stopSessionOut(v211.stopSessionIn(stop)), stop);
    assert.deepEqual(v211.unlockConnectorOut(v211.unlockConnectorIn(unlock)), unlock);
  });
});

describe('command responses and results', () => {
  it('a 2.1.1 CommandResponse answer gets the hub\'s timeout; TIMEOUT (no 2.2.1 CommandResponseType) is REJECTED', () => {
    for (const result of ['NOT_SUPPORTED', 'REJECTED', 'ACCEPTED', 'UNKNOWN_SESSION'] as const) {
      const canonical = v211.commandResponseIn({ result }, 30);
      assert.deepEqual(canonical, { result, timeout: 30 });
      assertValid('ocpi/command_response.json', canonical);
      assert.deepEqual(v211.commandResponseOut(canonical), { result });
    }
    assert.deepEqual(v211.commandResponseIn({ result: 'TIMEOUT' }, 30), { result: 'REJECTED', timeout: 30 });
    assert.deepEqual(v211.commandResponseOut({ result: 'ACCEPTED', timeout: 30, message: [{ language: 'en', text: 'ok' }] }), { result: 'ACCEPTED' });
  });

  it('the CommandResponse a 2.1.1 CPO POSTs to the response_url is a CommandResult; UNKNOWN_SESSION is REJECTED', () => {
    const expected = { NOT_SUPPORTED: 'NOT_SUPPORTED', REJECTED: 'REJECTED', ACCEPTED: 'ACCEPTED', TIMEOUT: 'TIMEOUT', UNKNOWN_SESSION: 'REJECTED' } as const;
    for (const [sent, result] of Object.entries(expected) as Array<[keyof typeof expected, CommandResult['result']]>) {
      const canonical = v211.commandResultIn({ result: sent });
      assert.deepEqual(canonical, { result });
      assertValid('ocpi/command_result.json', canonical);
    }
  });

  it('a CommandResult to a 2.1.1 eMSP is a CommandResponse: every 2.2.1-only result is REJECTED (CANCELED_RESERVATION: ACCEPTED)', () => {
    const expected: Record<CommandResult['result'], string> = { ACCEPTED: 'ACCEPTED', CANCELED_RESERVATION: 'ACCEPTED', EVSE_OCCUPIED: 'REJECTED', EVSE_INOPERATIVE: 'REJECTED', FAILED: 'REJECTED', NOT_SUPPORTED: 'NOT_SUPPORTED', REJECTED: 'REJECTED', TIMEOUT: 'TIMEOUT', UNKNOWN_RESERVATION: 'REJECTED' };
    for (const [result, sent] of Object.entries(expected) as Array<[CommandResult['result'], string]>) {
      const out = v211.commandResultOut({ result, message: [{ language: 'en', text: 'x' }] });
      assert.deepEqual(out, { result: sent });
      assertValid('ocpi-2.1.1/command_response.json', out);
    }
  });
});

describe('Credentials', () => {
  it('the credentials.md 2.1 example: one role, the party\'s registered one, and back as sent', () => {
    const sent = example211('credentials.md', 'Example') as Ocpi211.Credentials;
    assertValid('ocpi-2.1.1/credentials.json', sent);
    const canonical = v211.credentialsIn(clone(sent), 'CPO');
    assertValid('ocpi/credentials.json', canonical);
    assert.deepEqual(canonical.roles.map((r) => [r.role, r.country_code, r.party_id]), [['CPO', 'NL', 'EXA']]);
    assert.deepEqual(v211.credentialsOut(canonical), sent);
  });

  for (const file of ['credentials_example.json', 'credentials_example2.json', 'credentials_example3.json', 'credentials_example4.json']) {
    it(`2.2.1 ${file} -> 2.1.1 is the first role's party (further roles dropped)`, () => {
      const canonical = example221(file) as Credentials;
      const out = v211.credentialsOut(canonical) as Ocpi211.Credentials;
      assertValid('ocpi-2.1.1/credentials.json', out);
      assert.equal(out.party_id, canonical.roles[0].party_id);
    });
  }
});

describe('version details', () => {
  it('the version_information_endpoint.md example gains the roles its party\'s role implies', () => {
    const block = examples211('version_information_endpoint.md').find((e) => e.text.includes('"endpoints"'));
    const sent = { ...(JSON.parse(block?.text ?? '') as Ocpi211.VersionDetails), version: '2.1.1' as const };
    assertValid('ocpi-2.1.1/version_details.json', sent);
    const cpo = v211.versionDetailsIn(clone(sent), 'CPO');
    assertValid('ocpi/version_details.json', cpo);
    assert.deepEqual(cpo.endpoints.map((e) => `${e.identifier}:${e.role}`), ['credentials:SENDER', 'credentials:RECEIVER', 'locations:SENDER']);
    assert.deepEqual(v211.versionDetailsIn(clone(sent), 'EMSP').endpoints.map((e) => `${e.identifier}:${e.role}`), ['credentials:SENDER', 'credentials:RECEIVER', 'locations:RECEIVER']);
  });

  it('the hub\'s 2.2.1 version details as a 2.1.1 partner reads them: the counterpart\'s interface per module, 2.2-only modules left out', () => {
    const url = (m: string, r: string): string => `https://hub.example/ocpi/2.1.1/${m}/${r.toLowerCase()}`;
    const modules = ['cdrs', 'commands', 'locations', 'sessions', 'tariffs', 'tokens', 'chargingprofiles', 'hubclientinfo'] as const;
    const hub = { version: '2.2.1', endpoints: [{ identifier: 'credentials', role: 'RECEIVER', url: url('credentials', 'x') }, ...modules.flatMap((m) => (['SENDER', 'RECEIVER'] as const).map((role) => ({ identifier: m, role, url: url(m, role) })))] } as VersionDetails;
    const toCpo = v211.versionDetailsOut(hub, 'CPO') as Ocpi211.VersionDetails;
    assertValid('ocpi-2.1.1/version_details.json', toCpo);
    assert.deepEqual(toCpo.endpoints.map((e) => e.url.slice('https://hub.example/ocpi/2.1.1/'.length)), ['credentials/x', 'cdrs/receiver', 'commands/sender', 'locations/receiver', 'sessions/receiver', 'tariffs/receiver', 'tokens/sender']);
    const toEmsp = v211.versionDetailsOut(hub, 'EMSP') as Ocpi211.VersionDetails;
    assert.deepEqual(toEmsp.endpoints.map((e) => e.url.slice('https://hub.example/ocpi/2.1.1/'.length)), ['credentials/x', 'cdrs/sender', 'commands/receiver', 'locations/sender', 'sessions/sender', 'tariffs/sender', 'tokens/receiver']);
    assert.equal(toCpo.version, '2.1.1');
  });
});
