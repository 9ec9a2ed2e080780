// Whether a Session PATCH may be accepted (src/known-sessions.ts): the session held, or the dispatcher
// caught up before a refusal; behind beyond the bound is 503, never a wrong UNKNOWN_SESSION.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HubError } from '@hub/ocpi';
import type { DeliveryStore } from '@hub/core';
import { KnownSessions, requireKnownSession, type DispatcherWait } from '../src/http/known-sessions.ts';

const path = { countryCode: 'NL', partyId: 'CPO', id: 'Sess-1' };

/** A delivery store that holds the session from the `heldFrom`-th existence query on. */
function deliveries(heldFrom: number): { store: DeliveryStore; queries: () => number } {
  let queries = 0;
  const store = { sessionExists: () => Promise.resolve(++queries >= heldFrom) } as unknown as DeliveryStore;
  return { store, queries: () => queries };
}
const wait = (caughtUp: boolean): DispatcherWait & { calls: number } => {
  const w = { calls: 0, caughtUp: () => ((w.calls += 1), Promise.resolve(caughtUp)) };
  return w;
};
const kind = (e: unknown) => (e instanceof HubError ? e.kind : String(e));

describe('requireKnownSession', () => {
  it('accepts a held session without waiting, and then without a query', async () => {
    const d = deliveries(1);
    const w = wait(true);
    const known = new KnownSessions();
    await requireKnownSession(d.store, w, known, path);
    await requireKnownSession(d.store, w, known, { ...path, id: 'SESS-1', countryCode: 'nl' });
    assert.deepEqual([d.queries(), w.calls], [1, 0]);
  });

  it('waits for the dispatcher on a miss: a PUT just accepted is found after it', async () => {
    const d = deliveries(2);
    const w = wait(true);
    await requireKnownSession(d.store, w, new KnownSessions(), path);
    assert.deepEqual([d.queries(), w.calls], [2, 1]);
  });

  it('refuses with UNKNOWN_SESSION only once the dispatcher has caught up', async () => {
    await assert.rejects(requireKnownSession(deliveries(Infinity).store, wait(true), new KnownSessions(), path), (e) => kind(e) === 'UNKNOWN_SESSION');
  });

  it('answers UNAVAILABLE (503, retry) when the dispatcher is behind beyond the bound', async () => {
    await assert.rejects(requireKnownSession(deliveries(Infinity).store, wait(false), new KnownSessions(), path), (e) => kind(e) === 'UNAVAILABLE');
  });
});

describe('KnownSessions', () => {
  it('is bounded: when full it starts over', () => {
    const known = new KnownSessions(2);
    known.add({ ...path, id: 'A' });
    known.add({ ...path, id: 'B' });
    known.add({ ...path, id: 'C' });
    assert.deepEqual([known.has({ ...path, id: 'A' }), known.has({ ...path, id: 'C' })], [false, true]);
    assert.equal(known.has({ ...path, partyId: 'OTH', id: 'C' }), false, 'another CPO\'s session is another session');
  });
});
