// An append the event log refused (no broker answered within appendTimeoutMs) is never written
// later: the ingress answered it 503, and the partner's retry of it would be written a second time
// (docs/reference/errors.md, "503 during an outage"). On a broker of this test's own that it stops and
// starts again. Before the topic is read, the test waits longer than the client's longest pause between
// retries once the broker is back: a retry still alive would have landed by then.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createEventLog, ensureTopics } from '@hub/event-log';
import { newEvent, topics } from '@hub/events';
import { createLogger } from '@hub/observability';
import { topicDefinitions } from '@hub/testing';
import { startBroker, type RunningBroker } from '../stack/kafka.ts';
import { local } from '../stack/paths.ts';
import { freePort } from '../stack/proc.ts';

/**
 * The appends' bound: the refused one waits it out, and the first append and the one after the restart
 * (a new connection, a new producer id) must fit in it on a loaded machine (1 s did not, once in CI).
 */
const APPEND_TIMEOUT_MS = 5_000;

/** Longer than the client's longest pause between retries, 5 s (platformatic-connection.ts). */
const RETRY_PAUSE_OUTLASTED_MS = 8_000;

describe('a refused append', () => {
  const home = join(local, 'kafka', `refused-append-${process.pid}`);
  let broker: RunningBroker | undefined;
  after(async () => {
    await broker?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('is not written once the broker is back', async () => {
    const ports = { port: await freePort(), controllerPort: await freePort() };
    broker = await startBroker({ home, ...ports, heapMb: 384 });
    const topicPrefix = 'refused_';
    const log = await createEventLog({ brokers: [broker.brokers], clientId: 'refused-append-test', topicPrefix, appendTimeoutMs: APPEND_TIMEOUT_MS, logger: createLogger({ service: 'test', level: 'error' }) });
    try {
      const admin = log.topicAdmin();
      await ensureTopics(admin, topicDefinitions(), topicPrefix);
      await admin.close();
      const session = (id: string) => newEvent({ type: 'test.v1', source: 'test', subject: id, key: 'BE/BEC/S-1', data: { id } });
      await log.append(topics.sessions, [session('before the outage')]);

      await broker.stop();
      await assert.rejects(log.append(topics.sessions, [session('refused')]), /did not answer|Kafka/);
      broker = await startBroker({ home, ...ports, heapMb: 384 });
      await log.append(topics.sessions, [session('after the outage')]);
      await new Promise((r) => setTimeout(r, RETRY_PAUSE_OUTLASTED_MS));

      const read = await log.readTopics([topics.sessions], { until: 'end', timeoutMs: 20_000 });
      assert.ok(read.complete, 'the topic read to its end');
      assert.deepEqual(
        read.records.map((r) => (r.event?.data as { id: string }).id),
        ['before the outage', 'after the outage'],
        'the refused append is not in the topic',
      );
    } finally {
      await log.close();
    }
  });
});
