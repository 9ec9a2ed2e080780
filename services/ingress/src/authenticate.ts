import type { NextFunction, Request, Response } from 'express';
import { HubError, constantTimeEqual, credentialsTokenCandidates, hashCredentialsToken, hashesEqual, type OcpiVersion } from '@hub/ocpi';
import type { Caller, CallerLookup } from '@hub/core';

// Authentication (interface document, Authentication; OCPI 2.2.1 transport_and_format.asciidoc,
// Authorization header): "Authorization: Token <token>", Base64 (2.2.1) or raw (older peers); missing
// or unknown: HTTP 401. The initial token (CREDENTIALS_TOKEN_A) is accepted only on the versions and
// credentials modules, anywhere else HTTP 401.

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
  interface Request {
    caller: Caller;
    /** The credentials token exactly as the caller presented it (decoded). Never log it. */
    presentedToken: string;
  }
  }
}

/**
 * What the last admitted request on a keep-alive connection presented. A partner sends the same
 * Authorization header on every request of a connection, so the next one skips decoding and hashing
 * when the header is equal (compared in constant time). The cached caller is still looked up by hash
 * each time, so a rotated, deleted or suspended token stops working on open connections the moment
 * the caller cache is invalidated.
 */
interface ConnectionMemo {
  readonly authorization: string;
  readonly tokenHash: string;
  readonly token: string;
}
const connectionMemo = Symbol('hub.authenticationMemo');
interface Found {
  readonly caller: Caller;
  readonly token: string;
  readonly tokenHash: string;
}
type MemoSocket = { [connectionMemo]?: ConnectionMemo };

export function authenticate(
  lookup: CallerLookup,
  options: {
    allowInitialToken: boolean;
    allowSuspended: boolean;
    /** The OCPI version of the URLs behind this guard: callers the operator did not allow it get 404. */
    version?: OcpiVersion;
  },
  hashToken: (token: string) => string = hashCredentialsToken,
) {
  const admit = (req: Request, res: Response, next: NextFunction, found: Found | undefined, remember: boolean): void => {
    if (!found) return next(new HubError('AUTH_UNKNOWN_TOKEN'));
    const { caller, token } = found;
    const authorization = req.headers.authorization;
    if (remember && authorization && req.socket) (req.socket as MemoSocket)[connectionMemo] = { authorization, tokenHash: found.tokenHash, token };
    if (caller.tokenKind === 'INITIAL' && !options.allowInitialToken) return next(new HubError('AUTH_INITIAL_TOKEN_SCOPE'));
    if (!options.allowSuspended && caller.parties.length > 0 && caller.parties.every((p) => p.suspended)) {
      return next(new HubError('PARTY_SUSPENDED'));
    }
    if (options.version !== undefined && !caller.versions.includes(options.version)) return next(new HubError('VERSION_NOT_ALLOWED'));
    req.caller = caller;
    req.presentedToken = token;
    res.locals['partyKey'] = caller.label;
    next();
  };
  return (req: Request, res: Response, next: NextFunction): void => {
    const authorization = req.headers.authorization;
    const memo = (req.socket as MemoSocket | null)?.[connectionMemo];
    if (memo && authorization !== undefined && constantTimeEqual(memo.authorization, authorization)) {
      const cached = lookup.peek(memo.tokenHash);
      if (cached && hashesEqual(cached.tokenHash, memo.tokenHash)) return admit(req, res, next, { caller: cached, token: memo.token, tokenHash: memo.tokenHash }, false);
    }
    const candidates = credentialsTokenCandidates(authorization);
    if (candidates.length === 0) return next(new HubError('AUTH_MISSING'));
    // Fast path: a cached caller answers without a promise; a miss asks the store. The raw reading
    // of the header is hashed only when the Base64 one did not match.
    const hashes: string[] = [];
    for (const token of candidates) {
      const hash = hashToken(token);
      hashes.push(hash);
      const cached = lookup.peek(hash);
      if (cached && hashesEqual(cached.tokenHash, hash)) return admit(req, res, next, { caller: cached, token, tokenHash: hash }, true);
    }
    resolve(lookup, candidates, hashes)
      .then((found) => admit(req, res, next, found, true))
      .catch(next);
  };
}

async function resolve(lookup: CallerLookup, candidates: string[], hashes: string[]): Promise<Found | undefined> {
  for (let i = 0; i < candidates.length; i++) {
    const hash = hashes[i] ?? '';
    const caller = await lookup.find(hash);
    // The index lookup found the row by hash; the constant-time comparison keeps the final check free
    // of early-exit timing whatever the store did.
    if (caller && hashesEqual(caller.tokenHash, hash)) return { caller, token: candidates[i] ?? '', tokenHash: hash };
  }
  return undefined;
}
