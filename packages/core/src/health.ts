// Partner health with hysteresis (docs/decisions/0005-partner-health-hysteresis.md): one failed probe
// is a blip, not an outage. A CONNECTED partner goes OFFLINE after `offlineAfter` failed probes in a
// row and an OFFLINE one comes back after `onlineAfter` good ones, so a single lost probe no longer
// pushes ClientInfo (mod_hub_client_info.asciidoc) to every routed party twice. Pure: the store runs
// it inside the transaction that records the probe.

export type HealthStatus = 'CONNECTED' | 'OFFLINE';

export interface HealthPolicy {
  /** Consecutive failed probes that make a CONNECTED partner OFFLINE. */
  readonly offlineAfter: number;
  /** Consecutive good probes that make an OFFLINE partner CONNECTED. */
  readonly onlineAfter: number;
}

/** Every probe decides at once: what the hub did before hysteresis, and what tests of a single probe use. */
export const IMMEDIATE_HEALTH: HealthPolicy = Object.freeze({ offlineAfter: 1, onlineAfter: 1 });

export interface HealthState {
  readonly status: HealthStatus;
  /** Failed probes in a row, up to this one. */
  readonly failures: number;
  /** Good probes in a row, up to this one. */
  readonly successes: number;
}

/** The state after one more probe. A partner never probed takes its first probe's result. */
export function healthAfterProbe(held: HealthState | undefined, ok: boolean, policy: HealthPolicy): HealthState {
  const failures = ok ? 0 : (held?.failures ?? 0) + 1;
  const successes = ok ? (held?.successes ?? 0) + 1 : 0;
  if (!held) return { status: ok ? 'CONNECTED' : 'OFFLINE', failures, successes };
  if (held.status === 'CONNECTED' && failures >= policy.offlineAfter) return { status: 'OFFLINE', failures, successes };
  if (held.status === 'OFFLINE' && successes >= policy.onlineAfter) return { status: 'CONNECTED', failures, successes };
  return { status: held.status, failures, successes };
}
