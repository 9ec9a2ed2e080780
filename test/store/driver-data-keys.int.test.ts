// A token's data key (docs/decisions/0013-erasure-by-destroying-data-keys.md) is created by whichever
// replica first needs it. A session and a CDR of one token pushed at once make two ingress requests (or
// two replicas) ask for it together: both must get the same key, and neither may fail the push.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { driverDataKeyring } from '@hub/registry';
import { createPool, postgresDriverDataKeys } from '@hub/store';
import { givenTestStack } from '@hub/testing';

describe('driver data keys', () => {
  const given = givenTestStack('driver_data_keys');

  it('gives replicas asking for a new token\'s key at the same moment one key, without failing', async () => {
    const keyring = driverDataKeyring(randomBytes(32));
    // Separate pools: separate connections, so the inserts really race in Postgres.
    const pools = Array.from({ length: 6 }, (_, i) => createPool(given.stack.databaseUrl, { max: 1, application: `keys-${i}`, onIdleError: () => undefined }));
    try {
      const replicas = pools.map((pool) => postgresDriverDataKeys(pool, keyring));
      for (let round = 0; round < 20; round++) {
        const token = { countryCode: 'NL', partyId: 'TST', uid: `RACE-${round}`, type: 'RFID' };
        const settled = await Promise.allSettled(replicas.map((r) => r.keyFor(token)));
        const failures = settled.flatMap((s) => (s.status === 'rejected' ? [String((s.reason as Error).message)] : []));
        assert.deepEqual(failures, [], `round ${round}: every replica got the key`);
        const ids = new Set(settled.map((s) => (s.status === 'fulfilled' ? s.value.keyId : '')));
        const plains = new Set(settled.map((s) => (s.status === 'fulfilled' ? s.value.plain.toString('hex') : '')));
        assert.equal(ids.size, 1, `round ${round}: one key id`);
        assert.equal(plains.size, 1, `round ${round}: one key`);
      }
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });
});
