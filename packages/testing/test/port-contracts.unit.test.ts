// The in-memory adapters of @hub/testing against the port contracts (the same suites run against
// Postgres and Kafka in port-contracts.int.test.ts).
import { describe } from 'node:test';
import { inMemoryHub } from '../src/fakes/index.ts';
import { portContracts } from './contracts/index.ts';

describe('in-memory adapters', () => {
  const hub = inMemoryHub();
  portContracts(() => hub);
});
