// Every service stops on SIGTERM with exit code 0 inside its Kubernetes grace period
// (docs/how-to/deploy-kubernetes.md, Stopping) even when Kafka is gone: seen before, a projector whose
// broker had been SIGKILLed never exited, its consumer's fetch in flight retried by the client for
// minutes (each attempt retrying its metadata request too). The bound is a behaviour (the pod is not
// SIGKILLed at the end of its grace, the launcher does not wait), not a benchmark: 9 s, against the
// 25 s a pod has after its preStop sleep, and below the 10 s the dispatcher took when it stopped its two
// consumers one after the other (each waits STOP_FETCH_WAIT_MS, 5 s). This test runs its own broker
// and SIGKILLs only that one.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTestStack, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { startBroker, type RunningBroker } from '../infra/stack/kafka.ts';
import { local } from '../infra/stack/paths.ts';
import { freePort } from './helpers.ts';

const STOP_BOUND_MS = 9_000;

describe('services stop on SIGTERM with Kafka gone', () => {
  const home = join(local, 'kafka', `stop-without-kafka-${process.pid}`);
  let broker: RunningBroker | undefined;
  let stack: TestStack;
  const services: ServiceProcess[] = [];

  before(async () => {
    broker = await startBroker({ home, port: await freePort(), controllerPort: await freePort(), heapMb: 384 });
    stack = await createTestStack('stop_without_kafka', { brokers: [broker.brokers] });
    const env = stack.env({ HUB_PORT: String(await freePort()) });
    // The projector and the dispatcher consume (the dispatcher with two consumers); the ingress and
    // the prober produce and read offsets.
    services.push(
      ...(await Promise.all([
        startService('projector', env, /projector running/),
        startService('dispatcher', env, /dispatcher running/),
        startService('prober', env, /prober running/),
        startService('ingress', env, /ingress listening/),
      ])),
    );
  });

  after(async () => {
    await Promise.allSettled(services.map((s) => s.stop('SIGKILL')));
    await stack?.cleanup();
    await broker?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('each exits 0 within the bound after its broker was SIGKILLed', { timeout: 60_000 }, async () => {
    // Consumers long-poll: let them be in a fetch when the broker dies.
    await new Promise((r) => setTimeout(r, 2_000));
    assert.ok(broker && broker.pid > 0, 'the broker this test started has a pid');
    process.kill(broker.pid, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 1_000));
    const stops = await Promise.all(
      services.map(async (s) => {
        const startedAt = Date.now();
        const code = await s.stop('SIGTERM');
        return { name: s.name, code, ms: Date.now() - startedAt };
      }),
    );
    process.stdout.write(`stops with Kafka gone: ${stops.map((s) => `${s.name} ${s.ms} ms (exit ${s.code})`).join(', ')}\n`);
    for (const s of stops) {
      assert.equal(s.code, 0, `${s.name} exited ${s.code} (null: SIGKILLed by the test after 15 s) after ${s.ms} ms`);
      assert.ok(s.ms < STOP_BOUND_MS, `${s.name} stopped in ${s.ms} ms, over ${STOP_BOUND_MS}`);
    }
  });
});
