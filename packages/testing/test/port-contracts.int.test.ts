// The Postgres and Kafka adapters against the port contracts the in-memory adapters of @hub/testing
// are held to (port-contracts.unit.test.ts): the route tests' fakes cannot drift from the hub.
import { after, before, describe } from 'node:test';
import type { CallerLookup } from '@hub/core';
import { cachedCallerLookup, postgresChargingProfileStore, postgresCommandStore, postgresDeliveryStore, postgresRateLimiter, postgresReadModelStore, postgresRegistryStore, postgresRoutingDirectory } from '@hub/store';
import { givenTestStack } from '../src/given-stack.ts';
import { portContracts, type PortsUnderContract } from './contracts/index.ts';

describe('Postgres and Kafka adapters', () => {
  const given = givenTestStack('port_contracts');
  let ports: PortsUnderContract | undefined;
  let callers: CallerLookup | undefined;
  before(async () => {
    const { pool, eventLog, databaseUrl } = given.stack;
    const registry = postgresRegistryStore(pool);
    callers = await cachedCallerLookup(registry, { databaseUrl });
    ports = {
      registry,
      callers,
      routing: postgresRoutingDirectory(pool),
      readModels: postgresReadModelStore(pool),
      events: eventLog,
      rateLimiter: postgresRateLimiter(pool),
      deliveries: postgresDeliveryStore(pool),
      commands: postgresCommandStore(pool),
      chargingProfiles: postgresChargingProfileStore(pool),
    };
  });
  after(async () => {
    await callers?.close();
  });
  portContracts(() => {
    if (!ports) throw new Error('the adapters are made in before()');
    return ports;
  });
});
