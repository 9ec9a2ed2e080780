// The package exports nothing driver-shaped: no exported declaration of src/index.ts (a function's
// parameters and result, an interface's or class's members, a type alias, a constant's type,
// inferred types included) refers to a type declared by pg (its Pool, PoolClient, QueryResult, or
// the types of pg-protocol and pg-types it uses). The services hold the store's opaque Database, so
// only the store runs SQL. Checked with the TypeScript compiler on the index as the other packages
// import it (test/driver-surface.ts), as packages/event-log's test checks the Kafka clients.
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { driverPaths, driverTypesInExports } from '../../../test/driver-surface.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const DRIVER = driverPaths('pg|pg-[^\\/]+|@types[\\/]pg');

describe('@hub/store exports nothing driver-shaped', () => {
  it('no exported declaration refers to a pg type', () => {
    const found = driverTypesInExports(join(root, 'packages', 'store', 'src', 'index.ts'), DRIVER);
    assert.deepEqual(Object.fromEntries(found), {}, 'exports whose types name a pg type');
  });

  it('the check sees a driver type in an export (the internal modules export them)', () => {
    const found = driverTypesInExports(join(root, 'packages', 'store', 'src', 'pg-pool.ts'), DRIVER);
    assert.ok(found.has('pgPool'), `pgPool returns pg's Pool: ${JSON.stringify(Object.fromEntries(found))}`);
  });
});
