import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readProjectorConfig } from '../src/config.ts';

// docs/decisions/0014-snapshot-topics.md: only the deployment's projector keeps the snapshot; a
// replay into another database reads the whole history.
describe('projector configuration', () => {
  const base = { KAFKA_BROKERS: '127.0.0.1:9092', DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/hub', HUB_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') };

  it('starts from the snapshot by default, and from history when told', () => {
    assert.equal(readProjectorConfig(base).startFrom, 'snapshot');
    assert.equal(readProjectorConfig({ ...base, PROJECTOR_START_FROM: 'history' }).startFrom, 'history');
  });

  it('refuses any other start', () => {
    assert.throws(() => readProjectorConfig({ ...base, PROJECTOR_START_FROM: 'beginning' }), /PROJECTOR_START_FROM must be snapshot or history/);
  });
});
