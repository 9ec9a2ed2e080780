// The registry on real Postgres: callers by token hash, the atomic credentials exchange, the
// cross-replica cache invalidation, and the outbox reaching the real registry topic in order.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { appendInOrder } from '@hub/event-log';
import { topics } from '@hub/events';
import { generateCredentialsToken, hashCredentialsToken } from '@hub/ocpi';
import { registerParty, setSuspended, type OperatorDeps } from '@hub/registry';
import { cachedCallerLookup, drainOutbox, pendingOutbox, postgresRegistryStore } from '@hub/store';
import { createTestStack, type TestStack } from '@hub/testing';

describe('registry store on Postgres', () => {
  let stack: TestStack;
  let deps: OperatorDeps;
  before(async () => {
    stack = await createTestStack('registry_store');
    deps = { store: postgresRegistryStore(stack.pool), source: 'test', actor: 'test' };
  });
  after(async () => {
    await stack?.cleanup();
  });

  const change = (platformId: string, presented: string, next: string) => ({
    platformId,
    presentedTokenHash: hashCredentialsToken(presented),
    newHubTokenHash: hashCredentialsToken(next),
    partnerTokenSealed: Buffer.from('sealed'),
    versionsUrl: 'https://partner.example.com/ocpi/versions',
    version: '2.2.1' as const,
    endpoints: [{ identifier: 'credentials', role: 'SENDER' as const, url: 'https://partner.example.com/ocpi/2.2.1/credentials' }],
    businessDetails: [],
    outbox: [],
  });

  it('resolves a token to its platform and parties; unknown and revoked tokens resolve to nothing', async () => {
    const { platformId, initialToken } = await registerParty(deps, { party: { countryCode: 'NL', partyId: 'AAA', role: 'CPO' }, name: 'A' });
    await registerParty(deps, { party: { countryCode: 'NL', partyId: 'AAA', role: 'EMSP' }, name: 'A', platformId });
    const caller = await deps.store.findCaller(hashCredentialsToken(initialToken));
    assert.equal(caller?.platformId, platformId);
    assert.equal(caller?.tokenKind, 'INITIAL');
    assert.deepEqual(caller?.parties.map((p) => p.role).sort(), ['CPO', 'EMSP']);
    assert.equal(await deps.store.findCaller(hashCredentialsToken('unknown')), undefined);
    const hubToken = generateCredentialsToken();
    assert.equal(await deps.store.saveCredentials(change(platformId, initialToken, hubToken), 'register'), true);
    assert.equal(await deps.store.findCaller(hashCredentialsToken(initialToken)), undefined, 'initial token is dead');
    assert.equal((await deps.store.findCaller(hashCredentialsToken(hubToken)))?.registered, true);
  });

  it('of concurrent exchanges with one token exactly one succeeds', async () => {
    const { platformId, initialToken } = await registerParty(deps, { party: { countryCode: 'NL', partyId: 'BBB', role: 'CPO' }, name: 'B' });
    const outcomes = await Promise.all(
      Array.from({ length: 5 }, () => deps.store.saveCredentials(change(platformId, initialToken, generateCredentialsToken()), 'register')),
    );
    assert.equal(outcomes.filter(Boolean).length, 1);
    const { rows } = await stack.pool.query<{ n: number }>(`select count(*)::int as n from credentials_tokens where platform_id = $1 and revoked_at is null`, [platformId]);
    assert.equal(rows[0]?.n, 1);
  });

  it('a credentials change on one replica reaches every replica cache before its next request', async () => {
    const { platformId, initialToken } = await registerParty(deps, { party: { countryCode: 'NL', partyId: 'CCC', role: 'CPO' }, name: 'C' });
    const hubToken = generateCredentialsToken();
    await deps.store.saveCredentials(change(platformId, initialToken, hubToken), 'register');
    const replicaA = await cachedCallerLookup(deps.store, { databaseUrl: stack.databaseUrl, ttlMs: 60_000 });
    const replicaB = await cachedCallerLookup(deps.store, { databaseUrl: stack.databaseUrl, ttlMs: 60_000 });
    try {
      assert.ok(await replicaA.find(hashCredentialsToken(hubToken)));
      assert.ok(await replicaB.find(hashCredentialsToken(hubToken)), 'both replicas have it cached');
      // Rotation through replica A's store (any replica, same database).
      const rotated = generateCredentialsToken();
      assert.equal(await deps.store.saveCredentials(change(platformId, hubToken, rotated), 'update'), true);
      replicaA.invalidate();
      assert.equal(await replicaA.find(hashCredentialsToken(hubToken)), undefined);
      // Replica B learns through NOTIFY, delivered at commit.
      const deadline = Date.now() + 2000;
      let stale = await replicaB.find(hashCredentialsToken(hubToken));
      while (stale && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 5));
        stale = await replicaB.find(hashCredentialsToken(hubToken));
      }
      assert.equal(stale, undefined, 'replica B refuses the old token');
      // Suspension is a change of what the token may do: it invalidates as well.
      assert.ok(await replicaB.find(hashCredentialsToken(rotated)));
      await setSuspended(deps, { party: { countryCode: 'NL', partyId: 'CCC', role: 'CPO' }, suspended: true });
      await new Promise((r) => setTimeout(r, 100));
      assert.equal((await replicaB.find(hashCredentialsToken(rotated)))?.parties[0]?.suspended, true);
    } finally {
      await replicaA.close();
      await replicaB.close();
    }
  });

  it('the outbox reaches the registry topic in commit order and is published once', async () => {
    const published: string[] = [];
    const n = await drainOutbox(stack.pool, async (batch) => {
      published.push(...batch.map((b) => b.event.type));
      await appendInOrder(stack.eventLog, batch);
    });
    assert.ok(n >= 4);
    assert.equal(await pendingOutbox(stack.pool), 0);
    assert.equal(await drainOutbox(stack.pool, async () => assert.fail('nothing left to publish')), 0);
    assert.deepEqual(published.slice(0, 4), [
      'hub.registry.party-registered.v1',
      'hub.registry.party-registered.v1',
      'hub.registry.party-registered.v1',
      'hub.registry.party-registered.v1',
    ]);
    const admin = stack.eventLog.topicAdmin();
    const offsets = await admin.topicOffsets(stack.eventLog.physical(topics.registry));
    await admin.close();
    assert.equal(Number(offsets[0]?.high), n);
  });

  it('a failed publish leaves the events queued for the next drain', async () => {
    await registerParty(deps, { party: { countryCode: 'NL', partyId: 'DDD', role: 'CPO' }, name: 'D' });
    await assert.rejects(drainOutbox(stack.pool, async () => Promise.reject(new Error('kafka down'))));
    assert.equal(await pendingOutbox(stack.pool), 1);
    assert.equal(await drainOutbox(stack.pool, (b) => appendInOrder(stack.eventLog, b)), 1);
  });
});
