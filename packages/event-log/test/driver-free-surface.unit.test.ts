// The package exports nothing driver-shaped: no exported declaration of src/index.ts (a function's
// parameters and result, an interface's or class's members, a type alias, a constant's type,
// inferred types included) refers to a type declared by the Kafka client, @platformatic/kafka. Checked with
// the TypeScript compiler on the index as the other packages import it.
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { driverPaths, driverTypesInExports } from '../../../test/driver-surface.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const DRIVER = driverPaths('@platformatic[\\/]kafka');

describe('@hub/event-log exports nothing driver-shaped', () => {
  it('no exported declaration refers to a @platformatic/kafka type', () => {
    const found = driverTypesInExports(join(root, 'packages', 'event-log', 'src', 'index.ts'), DRIVER);
    assert.deepEqual(Object.fromEntries(found), {}, 'exports whose types name a Kafka client type');
  });

  it('the check sees a driver type in an export (the internal modules export them)', () => {
    const found = driverTypesInExports(join(root, 'packages', 'event-log', 'src', 'platformatic-fetch.ts'), DRIVER);
    assert.ok(found.has('fetchPositions'), `fetchPositions takes the client's Consumer: ${JSON.stringify(Object.fromEntries(found))}`);
  });
});
