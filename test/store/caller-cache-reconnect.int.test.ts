// The caller cache after a Postgres outage: while its LISTEN connection is down the
// cache is bypassed (correct, but every request then queries Postgres); once Postgres is back the
// listener reconnects and the cache serves again, even when the first reconnect attempts failed.
// The listener reaches the real Postgres through a TCP relay this test closes and reopens.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Caller, CallerLookup, RegistryStore } from '@hub/core';
import { cachedCallerLookup } from '@hub/store';
import { createTestStack, startTcpRelay, type TcpRelay, type TestStack } from '@hub/testing';

describe('cachedCallerLookup after Postgres went away', () => {
  let stack: TestStack;
  let lookup: CallerLookup | undefined;
  let relay: TcpRelay;
  let target: URL;

  before(async () => {
    stack = await createTestStack('caller_cache_reconnect');
    target = new URL(stack.env()['DATABASE_URL'] ?? '');
    relay = await startTcpRelay({ host: target.hostname, port: Number(target.port || 5432) });
  });

  after(async () => {
    await lookup?.close();
    await relay.close();
    await stack?.cleanup();
  });

  it('caches again once the listener is back, after failed reconnect attempts', { timeout: 60_000 }, async () => {
    const caller = { platformId: 'p1', tokenHash: 'h1', tokenKind: 'HUB', registered: true, parties: [], label: 'x' } as unknown as Caller;
    let queries = 0;
    const store = { findCaller: () => (queries++, Promise.resolve(caller)) } as unknown as RegistryStore;
    const viaRelay = new URL(target);
    viaRelay.hostname = '127.0.0.1';
    viaRelay.port = String(relay.port);
    lookup = await cachedCallerLookup(store, { databaseUrl: viaRelay.toString(), onError: () => undefined });
    await lookup.find('h1');
    assert.ok(lookup.peek('h1'), 'cached while listening');

    await relay.close();
    await new Promise((r) => setTimeout(r, 3500)); // several reconnect attempts fail meanwhile
    assert.equal(lookup.peek('h1'), undefined, 'bypassed while the listener is down');
    await relay.open();

    let cached = false;
    for (let i = 0; i < 40 && !cached; i++) {
      await lookup.find('h1');
      cached = lookup.peek('h1') !== undefined;
      if (!cached) await new Promise((r) => setTimeout(r, 250));
    }
    assert.ok(cached, `the cache serves again once Postgres is back (${queries} lookups went to the store)`);
  });
});
