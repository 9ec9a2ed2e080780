// Fault test: the Kafka broker is restarted while a CPO pushes sessions. Every push the
// hub acknowledged (status 1000: Kafka had it with acks=all) reaches the eMSP; pushes refused while
// the broker was away were answered 503 and are the CPO's to retry. This test runs its own broker so
// the restart disturbs no other test.
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { call, createTestStack, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { startBroker, type RunningBroker } from '../infra/stack/kafka.ts';
import { local } from '../infra/stack/paths.ts';
import { freePort, hubctl, onboard, type OnboardedPlatform } from './helpers.ts';

type Json = Record<string, unknown>;
const examples = new URL('../../shared/ocpi-2.2.1/examples/', import.meta.url);
const template = JSON.parse(readFileSync(new URL('session_example_1_simple_start.json', examples), 'utf8')) as Json;

describe('broker restart during load', () => {
  const home = join(local, 'kafka', `fault-${process.pid}`);
  let broker: RunningBroker;
  let ports: { port: number; controllerPort: number };
  let stack: TestStack;
  let ingress: ServiceProcess;
  let dispatcher: ServiceProcess;
  let hub: string;
  let cpo: OnboardedPlatform;
  let emsp: OnboardedPlatform;

  before(async () => {
    ports = { port: await freePort(), controllerPort: await freePort() };
    broker = await startBroker({ home, ...ports, heapMb: 384 });
    stack = await createTestStack('broker_restart', { brokers: [broker.brokers] });
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    const env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1', APPEND_TIMEOUT_MS: '4000', DELIVERY_RETRY_SCHEDULE_MS: '200,500,1000,1000,1000' });
    ingress = await startService('ingress', env, /ingress listening/);
    dispatcher = await startService('dispatcher', env, /dispatcher running/, 60_000);
    cpo = await onboard(hub, env, 'CPO', [{ role: 'CPO', countryCode: 'NL', partyId: 'STK' }]);
    emsp = await onboard(hub, env, 'eMSP', [{ role: 'EMSP', countryCode: 'NL', partyId: 'TST' }], [
      { identifier: 'credentials', role: 'SENDER' },
      { identifier: 'sessions', role: 'RECEIVER' },
    ]);
    assert.equal((await hubctl(env, ['routing', 'enable', '--emsp', 'NL/TST', '--cpo', 'NL/STK'])).code, 0);
  });

  after(async () => {
    await Promise.allSettled([ingress?.stop(), dispatcher?.stop(), cpo?.partner.close(), emsp?.partner.close()]);
    await stack?.cleanup();
    await broker?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('every acknowledged session push is delivered', async () => {
    const acknowledged: string[] = [];
    const refused: number[] = [];
    let restarted = false;
    let acknowledgedAfterRestart = 0;
    const push = async (i: number) => {
      const sentAfterRestart = restarted;
      const id = `S-${i}`;
      const res = await call(hub, 'PUT', `/ocpi/2.2.1/sessions/NL/STK/${id}`, {
        token: cpo.token,
        body: { ...template, id, status: 'ACTIVE', last_updated: new Date().toISOString() },
      }).catch(() => undefined);
      if (res?.body.status_code === 1000) {
        acknowledged.push(id);
        if (sentAfterRestart) acknowledgedAfterRestart++;
      } else refused.push(res?.status ?? 0);
    };
    // Pushes every 25 ms from before the broker stops until 30 pushes sent after it is back have been
    // acknowledged, however long the restart takes on this machine (bounded at 2 minutes).
    const load = (async () => {
      const until = Date.now() + 120_000;
      for (let i = 0; !(restarted && acknowledgedAfterRestart >= 30) && Date.now() < until; i++) {
        void push(i);
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
    await new Promise((r) => setTimeout(r, 1500));
    const acknowledgedBeforeStop = acknowledged.length;
    await broker.stop();
    await new Promise((r) => setTimeout(r, 1500));
    broker = await startBroker({ home, ...ports, heapMb: 384 });
    restarted = true;
    await load;
    await new Promise((r) => setTimeout(r, 5000)); // in-flight pushes settle (append timeout)
    assert.ok(acknowledgedBeforeStop >= 10, `acknowledged before the stop: ${acknowledgedBeforeStop}`);
    assert.ok(acknowledgedAfterRestart >= 30, `acknowledged after the restart: ${acknowledgedAfterRestart}`);
    const deadline = Date.now() + 90_000;
    const missing = () => acknowledged.filter((id) => !emsp.partner.received.some((r) => r.body['id'] === id));
    while (missing().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    assert.deepEqual(missing(), [], `acknowledged ${acknowledged.length}, refused ${refused.length} (${[...new Set(refused)].join(',')})`);
    assert.ok(refused.every((s) => s === 503 || s === 0), `refusals are "retry later": ${[...new Set(refused)].join(',')}`);
  });
});
