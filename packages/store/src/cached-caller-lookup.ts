import pg from 'pg';
import type { Caller, CallerLookup, RegistryStore } from '@hub/core';
import { CREDENTIALS_CHANNEL } from './postgres-registry-store.ts';

// Authentication is on every request's path, so callers are cached per ingress replica. Correctness
// across replicas comes from Postgres LISTEN/NOTIFY: every credentials change notifies in its own
// transaction, each replica drops its cache when the notification arrives (milliseconds after commit),
// and while the listening connection is down the cache is bypassed entirely. The TTL only bounds what
// a lost notification could cost. Unknown tokens are never cached, so the cache cannot be flooded.

export interface CachedCallerLookupOptions {
  readonly databaseUrl: string;
  readonly ttlMs?: number;
  readonly maxEntries?: number;
  readonly onError?: (e: unknown) => void;
}

// Long because: the cache and the LISTEN connection that invalidates it share their state (the
// entries, the listener, its generation); connect and reconnect are the bulk.
export async function cachedCallerLookup(store: RegistryStore, options: CachedCallerLookupOptions): Promise<CallerLookup> {
  const ttlMs = options.ttlMs ?? 30_000;
  const maxEntries = options.maxEntries ?? 100_000;
  const cache = new Map<string, { caller: Caller; expires: number }>();
  let listening = false;
  let closed = false;
  let listener: pg.Client | undefined;
  let generation = 0;

  const connect = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: options.databaseUrl, application_name: 'ocpi-hub-credentials-listener' });
    client.on('notification', () => {
      generation++;
      cache.clear();
    });
    client.on('error', (e) => {
      options.onError?.(e);
      listening = false;
      cache.clear();
      client.end().catch(() => undefined);
      reconnectLater();
    });
    try {
      await client.connect();
      await client.query(`listen ${CREDENTIALS_CHANNEL}`);
    } catch (e) {
      client.end().catch(() => undefined);
      throw e;
    }
    listener = client;
    cache.clear();
    listening = true;
  };
  // Until the listener is back the cache is bypassed, so keep trying (every second) for as long as
  // Postgres stays away: one failed attempt must not leave the replica without a cache for good.
  const reconnectLater = (): void => {
    if (closed) return;
    setTimeout(() => {
      if (closed) return;
      connect().catch((e: unknown) => {
        options.onError?.(e);
        reconnectLater();
      });
    }, 1000).unref();
  };
  await connect();

  return {
    peek(tokenHash) {
      if (!listening) return undefined;
      const hit = cache.get(tokenHash);
      return hit && hit.expires > Date.now() ? hit.caller : undefined;
    },
    async find(tokenHash) {
      const now = Date.now();
      const hit = listening ? cache.get(tokenHash) : undefined;
      if (hit && hit.expires > now) return hit.caller;
      const startedAt = generation;
      const caller = await store.findCaller(tokenHash);
      // Skip caching a read that raced with an invalidation: it may predate the change.
      if (caller && listening && startedAt === generation) {
        if (cache.size >= maxEntries) cache.clear();
        cache.set(tokenHash, { caller, expires: now + ttlMs });
      }
      return caller;
    },
    invalidate() {
      generation++;
      cache.clear();
    },
    async close() {
      closed = true;
      listening = false;
      await listener?.end().catch(() => undefined);
    },
  };
}
