// What the sandbox counterparts send is what the hub accepts (schemas/ocpi), and the documented
// rules (docs/reference/sandbox.md) are the ones the code applies.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { createSchemaValidator, describeViolations } from '@hub/schemas';
import {
  authorizationOutcome,
  cdrObject,
  commandPlan,
  REJECTING_LOCATION,
  SANDBOX_TOKEN_UIDS,
  sandboxLocations,
  sandboxTariff,
  sandboxToken,
  sessionObject,
  SILENT_LOCATION,
  tariffCost,
  TOKEN_RULES,
  type SessionState,
} from '../src/index.ts';

const validator = createSchemaValidator();
const valid = (schema: string, value: unknown) => {
  const { violations } = validator.validate(schema, value);
  assert.deepEqual(violations, [], `${schema}: ${describeViolations(violations)}`);
};
const cpo = { countryCode: 'NL', partyId: 'SBX' };
const now = '2026-11-26T10:00:00.000Z';

function session(kwh: number): SessionState {
  return {
    id: 'SBX-0123456789abcdef01234567',
    cpo,
    token: sandboxToken({ countryCode: 'DE', partyId: 'SBX' }, 'ALLOWED0001', now),
    locationId: 'SBX-LOC-1',
    evseUid: 'SBX-EVSE-1',
    connectorId: '1',
    authorizationReference: undefined,
    startedAt: now,
    status: 'COMPLETED',
    kwh,
    endedAt: '2026-11-26T11:30:00.000Z',
    lastUpdated: '2026-11-26T11:30:00.000Z',
  };
}

describe('sandbox objects', () => {
  it('are valid OCPI 2.2.1 objects the hub accepts', () => {
    for (const location of sandboxLocations(cpo, now)) valid('ocpi/location.json', location);
    valid('ocpi/tariff.json', sandboxTariff(cpo, now));
    for (const uid of SANDBOX_TOKEN_UIDS) valid('ocpi/token.json', sandboxToken({ countryCode: 'DE', partyId: 'SBX' }, uid, now));
    valid('ocpi/session.json', sessionObject(session(12.5)));
    const location = sandboxLocations(cpo, now)[0] ?? {};
    valid('ocpi/cdr.json', cdrObject(session(12.5), location, sandboxTariff(cpo, now), now));
  });

  it('prices a CDR by the tariff: 0.50 per session and 0.30 per kWh, 21% VAT on top', () => {
    const cdr = cdrObject(session(10), sandboxLocations(cpo, now)[0] ?? {}, sandboxTariff(cpo, now), now);
    assert.deepEqual(cdr['total_cost'], { excl_vat: 3.5, incl_vat: 4.235 });
    assert.deepEqual(cdr['total_energy_cost'], { excl_vat: 3, incl_vat: 3.63 });
    assert.equal(cdr['total_energy'], 10);
    assert.equal(cdr['total_time'], 1.5);
    assert.deepEqual(tariffCost(0).total, { excl_vat: 0.5, incl_vat: 0.605 });
  });
});

describe('sandbox rules', () => {
  it('decide an authorization by the uid prefix, ALLOWED otherwise', () => {
    assert.equal(authorizationOutcome('ALLOWED0001'), 'ALLOWED');
    assert.equal(authorizationOutcome('04A1B2C3'), 'ALLOWED');
    assert.equal(authorizationOutcome('blocked-7'), 'BLOCKED');
    assert.equal(authorizationOutcome('NOTALLOWED0001'), 'NOT_ALLOWED');
    assert.equal(authorizationOutcome('EXPIRED1'), 'EXPIRED');
    assert.equal(authorizationOutcome('NOCREDIT1'), 'NO_CREDIT');
    assert.equal(authorizationOutcome('UNKNOWN1'), 'UNKNOWN_TOKEN');
    assert.equal(authorizationOutcome('TIMEOUT1'), 'NO_ANSWER');
  });

  it('decide a command by its location, session, reservation and token', () => {
    assert.deepEqual(commandPlan('START_SESSION', { locationId: 'SBX-LOC-1', tokenOutcome: 'ALLOWED' }), { answer: 'ACCEPTED', result: 'ACCEPTED' });
    assert.deepEqual(commandPlan('START_SESSION', { locationId: 'SBX-LOC-1', tokenOutcome: 'BLOCKED' }), { answer: 'ACCEPTED', result: 'FAILED' });
    assert.equal(commandPlan('UNLOCK_CONNECTOR', { locationId: REJECTING_LOCATION.toLowerCase() }).answer, 'REJECTED');
    assert.deepEqual(commandPlan('RESERVE_NOW', { locationId: SILENT_LOCATION }), { answer: 'ACCEPTED', result: 'NONE' });
    assert.equal(commandPlan('STOP_SESSION', { sessionRunning: false }).answer, 'REJECTED');
    assert.deepEqual(commandPlan('STOP_SESSION', { sessionRunning: true }), { answer: 'ACCEPTED', result: 'ACCEPTED' });
    assert.equal(commandPlan('CANCEL_RESERVATION', { reservationKnown: false }).answer, 'REJECTED');
  });

  it('are the ones docs/reference/sandbox.md lists', () => {
    const reference = readFileSync(new URL('../../../docs/reference/sandbox.md', import.meta.url), 'utf8');
    for (const rule of TOKEN_RULES) assert.ok(reference.includes(`\`${rule.prefix}\``), `the reference names the prefix ${rule.prefix}`);
    for (const uid of SANDBOX_TOKEN_UIDS) assert.ok(reference.includes(uid), `the reference names the token ${uid}`);
    for (const location of [REJECTING_LOCATION, SILENT_LOCATION]) assert.ok(reference.includes(location), `the reference names ${location}`);
  });
});
