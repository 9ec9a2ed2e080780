// Token deliveries on real Postgres (mod_tokens.asciidoc, Receiver interface): one token
// event becomes one row per CPO routed to the eMSP (or the one its OCPI-to named), each CPO's row holds
// the newest full token with PATCHes merged, and claims are per receiving CPO.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { overrideEndpoint, registerParty, setRoutingRule, setSuspended, type OperatorDeps } from '@hub/registry';
import { RECIPIENT_CC, RECIPIENT_PID, postgresDeliveryStore, postgresRegistryStore } from '@hub/store';
import { EVERY_ROUTED_CPO, type DeliveryInput, type DeliveryStore } from '@hub/core';
import { createTestStack, type TestStack } from '@hub/testing';

const emsp = { countryCode: 'NL', partyId: 'EMP' };
const cpos = ['CP1', 'CP2', 'CP3', 'CP4', 'CP5'].map((partyId) => ({ countryCode: 'BE', partyId }));
const [cp1, cp2, cp3, cp4, cp5] = cpos as [(typeof cpos)[0], (typeof cpos)[0], (typeof cpos)[0], (typeof cpos)[0], (typeof cpos)[0]];

let offset = 0;
function tokenEvent(uid: string, payload: Record<string, unknown>, options: { cpo?: { countryCode: string; partyId: string }; patch?: boolean } = {}): DeliveryInput {
  return {
    kind: 'token',
    emsp,
    cpo: options.cpo ?? EVERY_ROUTED_CPO,
    objectId: `${uid}|RFID`,
    partition: 0,
    offset: String(++offset),
    payload,
    correlationId: undefined,
    eventTime: '2026-01-01T00:00:00Z',
    ...(options.patch ? { patch: true } : {}),
  };
}
const token = (uid: string, lastUpdated: string, valid = true) => ({ country_code: 'NL', party_id: 'EMP', uid, type: 'RFID', contract_id: `C-${uid}`, issuer: 'EMP', valid, whitelist: 'ALLOWED', last_updated: lastUpdated });

describe('token deliveries on Postgres', () => {
  let stack: TestStack;
  let deps: OperatorDeps;
  let store: DeliveryStore;
  before(async () => {
    stack = await createTestStack('token_deliveries');
    deps = { store: postgresRegistryStore(stack.pool), source: 'test', actor: 'test' };
    store = postgresDeliveryStore(stack.pool);
    await registerParty(deps, { party: { ...emsp, role: 'EMSP' }, name: 'eMSP' });
    for (const cpo of cpos) await registerParty(deps, { party: { ...cpo, role: 'CPO' }, name: cpo.partyId });
    // CP1-CP3 and CP5 routed; CP5 lists no tokens receiver; CP4 has one but no rule; CP3 is suspended.
    for (const cpo of [cp1, cp2, cp3, cp5]) await setRoutingRule(deps, { emsp, cpo, enabled: true });
    for (const cpo of [cp1, cp2, cp3, cp4]) await overrideEndpoint(deps, { party: { ...cpo, role: 'CPO' }, module: 'tokens', url: `https://${cpo.partyId.toLowerCase()}.example.com/ocpi/2.2.1/tokens` });
    await setSuspended(deps, { party: { ...cp3, role: 'CPO' }, suspended: true });
  });
  after(async () => {
    await stack?.cleanup();
  });

  const rows = async (uid: string) =>
    (await stack.pool.query<{ cpo: string; valid: boolean; recipient: string; recipient_role: string; state: string }>(
      `select cpo_party_id as cpo, (payload->>'valid')::boolean as valid, ${RECIPIENT_CC} || '/' || ${RECIPIENT_PID} as recipient, recipient_role, state
         from deliveries where kind = 'token' and object_id = $1 order by cpo_party_id`,
      [`${uid.toUpperCase()}|RFID`],
    )).rows;

  it('fans a token out to every actively routed CPO with a tokens receiver, received by the CPO', async () => {
    await store.enqueue([tokenEvent('tok1', token('tok1', '2026-01-01T10:00:00Z'))]);
    // CP3 is suspended (no active route), CP4 has no rule, CP5 no tokens receiver: none gets a row.
    assert.deepEqual(await rows('tok1'), [
      { cpo: 'CP1', valid: true, recipient: 'BE/CP1', recipient_role: 'CPO', state: 'pending' },
      { cpo: 'CP2', valid: true, recipient: 'BE/CP2', recipient_role: 'CPO', state: 'pending' },
    ]);
  });

  it('moves the position past a token no CPO gets (an eMSP with no routed CPO)', async () => {
    const lonely = { countryCode: 'DE', partyId: 'LON' };
    await registerParty(deps, { party: { ...lonely, role: 'EMSP' }, name: 'lonely' });
    const event = { ...tokenEvent('tok0', token('tok0', '2026-01-01T10:00:00Z')), emsp: lonely };
    await store.enqueue([event], { consumerGroup: 'g', topic: 'ocpi.tokens.v1', partition: 0, nextOffset: '77' });
    assert.deepEqual(await rows('tok0'), []);
    assert.equal((await store.deliveryPositions('g', 'ocpi.tokens.v1')).get(0), 77n);
  });

  it('goes only to the CPO the eMSP named (OCPI-to)', async () => {
    await store.enqueue([tokenEvent('tok2', token('tok2', '2026-01-01T10:00:00Z'), { cpo: cp2 })]);
    assert.deepEqual((await rows('tok2')).map((r) => r.cpo), ['CP2']);
  });

  it('merges a PATCH into the token each CPO holds, in the same batch and later; a PATCH of a token no CPO holds makes no row', async () => {
    await store.enqueue([tokenEvent('tok3', token('tok3', '2026-01-01T10:00:00Z')), tokenEvent('tok3', { valid: false, last_updated: '2026-01-01T10:01:00Z' }, { patch: true })]);
    assert.deepEqual((await rows('tok3')).map((r) => [r.cpo, r.valid]), [['CP1', false], ['CP2', false]]);
    // A batch with a session PATCH and a token PATCH: both folds apply in the one transaction.
    const sessionPut: DeliveryInput = { kind: 'session', emsp, cpo: cp1, objectId: 'S1', partition: 1, offset: String(++offset), payload: { id: 'S1', status: 'ACTIVE', kwh: 1, last_updated: '2026-01-01T10:00:00Z' }, correlationId: undefined, eventTime: '2026-01-01T00:00:00Z' };
    await store.enqueue([sessionPut]);
    await store.enqueue([
      { ...sessionPut, offset: String(++offset), payload: { kwh: 2, last_updated: '2026-01-01T10:05:00Z' }, patch: true },
      tokenEvent('tok3', { valid: true, last_updated: '2026-01-01T10:01:30Z' }, { patch: true }),
    ]);
    const session = await stack.pool.query<{ kwh: number }>("select (payload->>'kwh')::int as kwh from deliveries where kind = 'session' and object_id = 'S1'");
    assert.equal(session.rows[0]?.kwh, 2);
    assert.deepEqual((await rows('tok3')).map((r) => r.valid), [true, true]);
    await store.enqueue([tokenEvent('tok3', { valid: true, last_updated: '2026-01-01T10:02:00Z' }, { patch: true })]);
    const merged = await stack.pool.query<{ payload: Record<string, unknown> }>("select payload from deliveries where kind = 'token' and object_id = 'TOK3|RFID' and cpo_party_id = 'CP1'");
    assert.deepEqual(merged.rows[0]?.payload, token('tok3', '2026-01-01T10:02:00Z', true));
    // An older PATCH (an eMSP retry that landed late) changes nothing: newest wins.
    await store.enqueue([tokenEvent('tok3', { valid: false, last_updated: '2026-01-01T09:00:00Z' }, { patch: true })]);
    assert.deepEqual((await rows('tok3')).map((r) => r.valid), [true, true]);
    await store.enqueue([tokenEvent('nope', { valid: false, last_updated: '2026-01-01T10:00:00Z' }, { patch: true })]);
    assert.deepEqual(await rows('nope'), []);
    // A uid is a CiString: a PATCH naming it in another case is the same token; what CPOs get keeps the uid as PUT.
    await store.enqueue([tokenEvent('TOK3', { whitelist: 'NEVER', last_updated: '2026-01-01T10:03:00Z' }, { patch: true })]);
    const cased = await stack.pool.query<{ uid: string; whitelist: string }>("select payload->>'uid' as uid, payload->>'whitelist' as whitelist from deliveries where kind = 'token' and object_id = 'TOK3|RFID'");
    assert.deepEqual(cased.rows, [{ uid: 'tok3', whitelist: 'NEVER' }, { uid: 'tok3', whitelist: 'NEVER' }]);
  });

  it('claims per receiving CPO: one CPO with a backlog does not take the slots of another', async () => {
    await stack.pool.query("update deliveries set state = 'delivered'");
    await store.enqueue(Array.from({ length: 20 }, (_, i) => tokenEvent(`bulk${i}`, token(`bulk${i}`, '2026-01-01T11:00:00Z'), { cpo: cp1 })));
    await store.enqueue([tokenEvent('one', token('one', '2026-01-01T11:00:00Z'), { cpo: cp2 })]);
    const claimed = await store.claimDue(100, new Map([['BE/CP1', 3]]), 5, 30_000);
    const byCpo = new Map<string, number>();
    for (const d of claimed) byCpo.set(d.cpo.partyId, (byCpo.get(d.cpo.partyId) ?? 0) + 1);
    assert.deepEqual(Object.fromEntries(byCpo), { CP1: 2, CP2: 1 });
    assert.ok(claimed.every((d) => d.recipientRole === 'CPO'));
  });

  it('lists by receiving party and kind, whatever the direction (hubctl deliveries --recipient, --kind)', async () => {
    const all = await store.list({ limit: 1000 });
    const toCp1 = await store.list({ recipient: cp1, kinds: ['token'], limit: 1000 });
    assert.ok(toCp1.length > 0);
    assert.deepEqual(toCp1, all.filter((d) => d.kind === 'token' && d.recipientRole === 'CPO' && d.cpo.partyId === 'CP1'));
    // The eMSP receives the session (S1, from CP1), not the tokens it pushed.
    assert.deepEqual((await store.list({ recipient: emsp, limit: 1000 })).map((d) => d.kind), ['session']);
  });

  it('a re-send from the read model (offset -1) revives a parked record of the version it holds, and leaves a delivered one alone', async () => {
    const resend = (uid: string): DeliveryInput => ({ ...tokenEvent(uid, token(uid, '2026-01-01T12:00:00Z'), { cpo: cp2 }), partition: -1, offset: '-1', recipientRole: 'CPO' });
    await store.enqueue([tokenEvent('dead1', token('dead1', '2026-01-01T12:00:00Z'), { cpo: cp2 }), tokenEvent('done1', token('done1', '2026-01-01T12:00:00Z'), { cpo: cp2 })]);
    await stack.pool.query("update deliveries set state = 'dead' where object_id = 'DEAD1|RFID'");
    await stack.pool.query("update deliveries set state = 'delivered' where object_id = 'DONE1|RFID'");
    await store.enqueue([resend('dead1'), resend('done1')]);
    assert.deepEqual((await rows('dead1')).map((r) => r.state), ['pending']);
    assert.deepEqual((await rows('done1')).map((r) => r.state), ['delivered']);
  });
});
