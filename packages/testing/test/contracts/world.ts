import type { CallerLookup, CommandStore, RateLimiter, RegistryStore, RoutingDirectory } from '@hub/core';
import type { ChargingProfileStore } from '@hub/core';
import type { EventAppendLog, IngressDeliveryStore, ReadModelQueries } from '../../src/fakes/index.ts';

// The ports a contract suite checks, as one adapter family provides them: the in-memory adapters of
// @hub/testing (unit tests) or the Postgres and Kafka ones (integration tests). A suite must hold for
// both, so the fakes the route tests run on cannot drift from what the hub really does.

export interface PortsUnderContract {
  readonly registry: RegistryStore;
  readonly callers: CallerLookup;
  readonly routing: RoutingDirectory;
  readonly readModels: ReadModelQueries;
  readonly events: EventAppendLog;
  readonly rateLimiter: RateLimiter;
  readonly deliveries: IngressDeliveryStore;
  readonly commands: CommandStore;
  readonly chargingProfiles: ChargingProfileStore;
}

/** Resolved inside a test or hook: the adapters are made in a before hook. */
export type Ports = () => PortsUnderContract;

let counter = 0;
/**
 * A party id no other test of the run uses (the Postgres adapters share one database per suite), so
 * each rule arranges its own parties, routes and objects.
 */
export function freshParty(prefix: 'C' | 'E' | 'X'): string {
  counter++;
  return `${prefix}${counter.toString(36).toUpperCase().padStart(2, '0')}`;
}
