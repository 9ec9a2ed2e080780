// Authentication middleware (interface document, Authentication; OCPI 2.2.1 transport_and_format.asciidoc,
// Authorization header), with an in-memory caller lookup: Base64 and raw tokens, refusals, and the
// per-connection memo that must never outlive a token's validity.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NextFunction, Request, Response } from 'express';
import { HubError, authorizationHeader, generateCredentialsToken, hashCredentialsToken } from '@hub/ocpi';
import type { Caller, CallerLookup } from '@hub/core';
import { authenticate } from '../src/authenticate.ts';

function callerFor(token: string, overrides: Partial<Caller> = {}): Caller {
  return { platformId: 'p1', tokenHash: hashCredentialsToken(token), tokenKind: 'HUB', registered: true, parties: [], versions: ['2.2.1'], version: '2.2.1', label: 'NL/CPO/CPO', ...overrides };
}

/** A caller cache that counts how often it was asked, standing in for the Postgres-backed one. */
function givenCallers(...callers: Caller[]) {
  const byHash = new Map(callers.map((c) => [c.tokenHash, c]));
  const asked: string[] = [];
  const lookup: CallerLookup = {
    peek: (hash) => {
      asked.push(hash);
      return byHash.get(hash);
    },
    find: (hash) => Promise.resolve(byHash.get(hash)),
    invalidate: () => byHash.clear(),
    close: () => Promise.resolve(),
  };
  return { lookup, asked, revoke: (c: Caller) => byHash.delete(c.tokenHash) };
}

/** Runs the middleware for one request on `socket` and resolves with what it passed to next(). */
function whenRequested(middleware: ReturnType<typeof authenticate>, socket: object, authorization: string | undefined) {
  const req = { headers: authorization === undefined ? {} : { authorization }, socket } as unknown as Request;
  const res = { locals: {} } as unknown as Response;
  return new Promise<{ error: unknown; req: Request }>((resolve) => {
    const next: NextFunction = (error?: unknown) => resolve({ error, req });
    middleware(req, res, next);
  });
}

const kindOf = (e: unknown) => (e instanceof HubError ? e.kind : e);

describe('authenticate', () => {
  const options = { allowInitialToken: false, allowSuspended: false };

  it('admits a known token sent Base64-encoded (2.2.1) and raw (older peers)', async () => {
    const token = generateCredentialsToken();
    const { lookup } = givenCallers(callerFor(token));
    const auth = authenticate(lookup, options);
    for (const header of [authorizationHeader(token), `Token ${token}`]) {
      const { error, req } = await whenRequested(auth, {}, header);
      assert.equal(error, undefined);
      assert.equal(req.caller.platformId, 'p1');
      assert.equal(req.presentedToken, token);
    }
  });

  it('refuses a missing header, another scheme and an unknown token with 401 kinds', async () => {
    const { lookup } = givenCallers(callerFor(generateCredentialsToken()));
    const auth = authenticate(lookup, options);
    assert.equal(kindOf((await whenRequested(auth, {}, undefined)).error), 'AUTH_MISSING');
    assert.equal(kindOf((await whenRequested(auth, {}, 'Bearer abc')).error), 'AUTH_MISSING');
    assert.equal(kindOf((await whenRequested(auth, {}, authorizationHeader(generateCredentialsToken()))).error), 'AUTH_UNKNOWN_TOKEN');
  });

  it('reuses a connection’s admitted header without hashing again, still asking the caller cache', async () => {
    const token = generateCredentialsToken();
    const caller = callerFor(token);
    const { lookup, asked } = givenCallers(caller);
    let hashed = 0;
    const auth = authenticate(lookup, options, (t) => (hashed++, hashCredentialsToken(t)));
    const socket = {};
    await whenRequested(auth, socket, authorizationHeader(token));
    assert.equal(hashed, 1);
    asked.length = 0;
    const { error, req } = await whenRequested(auth, socket, authorizationHeader(token));
    assert.equal(error, undefined);
    assert.equal(req.presentedToken, token);
    assert.equal(hashed, 1);
    assert.deepEqual(asked, [caller.tokenHash]);
    // Another connection with the same header hashes on its own.
    await whenRequested(auth, {}, authorizationHeader(token));
    assert.equal(hashed, 2);
  });

  it('a revoked token stops working on a connection that used it before', async () => {
    const token = generateCredentialsToken();
    const caller = callerFor(token);
    const { lookup, revoke } = givenCallers(caller);
    const auth = authenticate(lookup, options);
    const socket = {};
    assert.equal((await whenRequested(auth, socket, authorizationHeader(token))).error, undefined);
    revoke(caller);
    assert.equal(kindOf((await whenRequested(auth, socket, authorizationHeader(token))).error), 'AUTH_UNKNOWN_TOKEN');
  });

  it('another header on the same connection is authenticated on its own', async () => {
    const token = generateCredentialsToken();
    const other = generateCredentialsToken();
    const { lookup } = givenCallers(callerFor(token), callerFor(other, { platformId: 'p2' }));
    const auth = authenticate(lookup, options);
    const socket = {};
    await whenRequested(auth, socket, authorizationHeader(token));
    assert.equal(kindOf((await whenRequested(auth, socket, authorizationHeader(generateCredentialsToken()))).error), 'AUTH_UNKNOWN_TOKEN');
    assert.equal((await whenRequested(auth, socket, authorizationHeader(other))).req.caller.platformId, 'p2');
    assert.equal((await whenRequested(auth, socket, `Token ${token}`)).req.caller.platformId, 'p1');
  });

  it('scope and suspension are checked on every request, remembered or not', async () => {
    const initial = generateCredentialsToken();
    const suspended = generateCredentialsToken();
    const party = { platformId: 'p1', name: 'CPO', countryCode: 'NL', partyId: 'CPO', role: 'CPO', suspended: true, updatedAt: new Date() } as const;
    const { lookup } = givenCallers(callerFor(initial, { tokenKind: 'INITIAL' }), callerFor(suspended, { parties: [party] }));
    const lenient = authenticate(lookup, { allowInitialToken: true, allowSuspended: true });
    const strict = authenticate(lookup, options);
    const socket = {};
    assert.equal((await whenRequested(lenient, socket, authorizationHeader(initial))).error, undefined);
    assert.equal(kindOf((await whenRequested(strict, socket, authorizationHeader(initial))).error), 'AUTH_INITIAL_TOKEN_SCOPE');
    assert.equal((await whenRequested(lenient, socket, authorizationHeader(suspended))).error, undefined);
    assert.equal(kindOf((await whenRequested(strict, socket, authorizationHeader(suspended))).error), 'PARTY_SUSPENDED');
  });
});
