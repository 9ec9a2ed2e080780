import type { RateLimiter } from '@hub/core';
import { pgPool } from './pg-pool.ts';
import type { Database } from './pool.ts';

// Fixed one-minute windows counted in Postgres, so a limit holds across every ingress replica
// (interface document, Limits: per party, per minute). One upsert per limited request; give it a pool
// with asyncCommit: a counter increment lost in a crash is harmless, a WAL flush per request is not.

export function postgresRateLimiter(db: Database): RateLimiter {
  const pool = pgPool(db);
  let calls = 0;
  return {
    async hit(scope, party, limitPerMinute) {
      const { rows } = await pool.query<{ count: number; retry_after: number }>(
        `insert into rate_limit_windows (scope, party, window_start, count)
         values ($1, $2, date_trunc('minute', now()), 1)
         on conflict (scope, party, window_start) do update set count = rate_limit_windows.count + 1
         returning count, ceil(extract(epoch from (window_start + interval '1 minute' - now())))::int as retry_after`,
        [scope, party],
      );
      // Old windows are dropped now and then; a miss costs nothing but a few rows.
      if (++calls % 500 === 0) void pool.query(`delete from rate_limit_windows where window_start < now() - interval '5 minutes'`).catch(() => undefined);
      const count = rows[0]?.count ?? 1;
      return { allowed: count <= limitPerMinute, count, retryAfterSeconds: Math.max(1, rows[0]?.retry_after ?? 60) };
    },
  };
}
