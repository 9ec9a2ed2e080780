// Rate limits per party and per minute, holding across every ingress replica (interface document,
// Limits). The Postgres adapter counts fixed one-minute windows.

export interface RateLimitDecision {
  readonly allowed: boolean;
  readonly count: number;
  /** Seconds until the current window ends. */
  readonly retryAfterSeconds: number;
}

export interface RateLimiter {
  hit(scope: string, party: string, limitPerMinute: number): Promise<RateLimitDecision>;
}
