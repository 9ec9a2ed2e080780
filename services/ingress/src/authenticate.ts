import type { NextFunction, Request, Response } from 'express';
import { HubError, credentialsTokenCandidates, hashCredentialsToken, hashesEqual } from '@hub/ocpi';
import type { Caller } from '@hub/registry';
import type { CallerLookup } from '@hub/store';

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

export function authenticate(lookup: CallerLookup, options: { allowInitialToken: boolean; allowSuspended: boolean }) {
  const admit = (req: Request, res: Response, next: NextFunction, found: { caller: Caller; token: string } | undefined): void => {
    if (!found) return next(new HubError('AUTH_UNKNOWN_TOKEN'));
    const { caller, token } = found;
    if (caller.tokenKind === 'INITIAL' && !options.allowInitialToken) return next(new HubError('AUTH_INITIAL_TOKEN_SCOPE'));
    if (!options.allowSuspended && caller.parties.length > 0 && caller.parties.every((p) => p.suspended)) {
      return next(new HubError('PARTY_SUSPENDED'));
    }
    req.caller = caller;
    req.presentedToken = token;
    res.locals['partyKey'] = caller.label;
    next();
  };
  return (req: Request, res: Response, next: NextFunction): void => {
    const candidates = credentialsTokenCandidates(req.headers.authorization);
    if (candidates.length === 0) return next(new HubError('AUTH_MISSING'));
    // Fast path: a cached caller answers without a promise; a miss asks the store. The raw reading
    // of the header is hashed only when the Base64 one did not match.
    const hashes: string[] = [];
    for (const token of candidates) {
      const hash = hashCredentialsToken(token);
      hashes.push(hash);
      const cached = lookup.peek(hash);
      if (cached && hashesEqual(cached.tokenHash, hash)) return admit(req, res, next, { caller: cached, token });
    }
    resolve(lookup, candidates, hashes)
      .then((found) => admit(req, res, next, found))
      .catch(next);
  };
}

async function resolve(lookup: CallerLookup, candidates: string[], hashes: string[]): Promise<{ caller: Caller; token: string } | undefined> {
  for (let i = 0; i < candidates.length; i++) {
    const hash = hashes[i] ?? '';
    const caller = await lookup.find(hash);
    // The index lookup found the row by hash; the constant-time comparison keeps the final check free
    // of early-exit timing whatever the store did.
    if (caller && hashesEqual(caller.tokenHash, hash)) return { caller, token: candidates[i] ?? '' };
  }
  return undefined;
}
