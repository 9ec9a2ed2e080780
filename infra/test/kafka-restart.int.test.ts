// The local stack keeps its data across starts: a broker started again on the same home directory
// (as a second `npm start` does) keeps the storage it formatted once and every record appended.
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createEventLog, ensureTopics } from '@hub/event-log';
import { newEvent } from '@hub/events';
import { createLogger } from '@hub/observability';
import { startBroker, type RunningBroker } from '../stack/kafka.ts';
import { local } from '../stack/paths.ts';
import { freePort } from '../stack/proc.ts';

describe('local broker restart', () => {
  const home = join(local, 'kafka', `restart-test-${process.pid}`);
  let broker: RunningBroker | undefined;
  after(async () => {
    await broker?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('a second start on the same home keeps the cluster id, topics and records', async () => {
    const ports = { port: await freePort(), controllerPort: await freePort() };
    broker = await startBroker({ home, ...ports, heapMb: 384 });
    const clusterId = readFileSync(join(home, 'data', 'meta.properties'), 'utf8').match(/cluster\.id=(.+)/)?.[1];
    const logger = createLogger({ service: 'test', level: 'error' });
    const log1 = await createEventLog({ brokers: [broker.brokers], clientId: 'restart-1', logger });
    const admin = log1.topicAdmin();
    await ensureTopics(admin, [{ name: 'keep.v1', partitions: 1, replicationFactor: 1, config: {} }]);
    await log1.append('keep.v1', [newEvent({ type: 't', source: 'test', subject: 'a', key: 'a', data: { n: 1 } })]);
    await log1.close();
    await broker.stop();

    broker = await startBroker({ home, ...ports, heapMb: 384 });
    assert.equal(readFileSync(join(home, 'data', 'meta.properties'), 'utf8').match(/cluster\.id=(.+)/)?.[1], clusterId, 'storage not reformatted');
    const log2 = await createEventLog({ brokers: [broker.brokers], clientId: 'restart-2', logger });
    const admin2 = log2.topicAdmin();
    const offsets = await admin2.topicOffsets('keep.v1');
    assert.equal(offsets[0]?.high, '1', 'the record appended before the restart is still there');
    await log2.close();
  });
});
