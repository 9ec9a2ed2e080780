import type { RateLimiter } from '@hub/core';

// The RateLimiter port (@hub/store, rate-limiter.ts) in memory: fixed one-minute windows per scope
// and party, as postgresRateLimiter counts them (rate-limiter-contract.ts runs the same rules on both).

export function inMemoryRateLimiter(options: { now?: () => number } = {}): RateLimiter {
  const now = options.now ?? Date.now;
  const windows = new Map<string, number>();
  return {
    async hit(scope, party, limitPerMinute) {
      const at = now();
      const windowStart = Math.floor(at / 60_000) * 60_000;
      const key = `${scope}\u0000${party}\u0000${windowStart}`;
      const count = (windows.get(key) ?? 0) + 1;
      windows.set(key, count);
      return { allowed: count <= limitPerMinute, count, retryAfterSeconds: Math.max(1, Math.ceil((windowStart + 60_000 - at) / 1000)) };
    },
  };
}
