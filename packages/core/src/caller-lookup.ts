import type { Caller } from './registry-model.ts';

// Who a credentials token is, on every request's path: the ingress's authentication asks it. The
// Postgres adapter caches callers per replica and drops the cache on every credentials change.

export interface CallerLookup {
  /** The cached caller, synchronously, or undefined when it must be looked up with find(). */
  peek(tokenHash: string): Caller | undefined;
  find(tokenHash: string): Promise<Caller | undefined>;
  /** Drops every cached caller (a replica's own changes call it before answering). */
  invalidate(): void;
  close(): Promise<void>;
}
