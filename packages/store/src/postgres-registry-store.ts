import type { RegistryStore } from '@hub/core';
import { pgPool } from './pg-pool.ts';
import type { Database } from './pool.ts';
import { postgresRegistryCredentials } from './postgres-registry-credentials.ts';
import { postgresRegistryParties } from './postgres-registry-parties.ts';

// RegistryStore on Postgres, in two halves by concern. Every change that affects who a token belongs
// to or what it may do notifies CREDENTIALS_CHANNEL in its transaction, so every ingress replica drops
// its cached callers the moment the change commits (see cached-caller-lookup.ts).
export { CREDENTIALS_CHANNEL } from './registry-rows.ts';

export function postgresRegistryStore(db: Database): RegistryStore {
  const pool = pgPool(db);
  return { ...postgresRegistryCredentials(pool), ...postgresRegistryParties(pool) };
}
