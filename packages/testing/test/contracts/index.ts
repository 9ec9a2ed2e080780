import { chargingProfileStoreContract } from './charging-profile-store-contract.ts';
import { commandStoreContract } from './command-store-contract.ts';
import { readModelContract } from './read-model-contract.ts';
import { registryContract } from './registry-contract.ts';
import { routingContract } from './routing-contract.ts';
import { deliveryStoreContract, eventLogContract, rateLimiterContract } from './small-ports-contract.ts';
import type { Ports } from './world.ts';

export type { Ports, PortsUnderContract } from './world.ts';

/** Every port contract, against one adapter family. */
export function portContracts(ports: Ports): void {
  registryContract(ports);
  routingContract(ports);
  readModelContract(ports);
  eventLogContract(ports);
  rateLimiterContract(ports);
  deliveryStoreContract(ports);
  commandStoreContract(ports);
  chargingProfileStoreContract(ports);
}
