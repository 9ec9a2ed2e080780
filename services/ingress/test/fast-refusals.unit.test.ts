// Fast refusals in process (docs/decisions/0002-fast-refusals.md): the ingress composed as start.ts
// composes it, the event log behind the Kafka circuit breaker, on the in-memory ports and a fake clock.
// Once the breaker is open a push is answered 503 with Retry-After and the OCPI envelope without
// calling the event log; after the cool-down one probe goes through, and its success closes it.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Writable } from 'node:stream';
import { topics } from '@hub/events';
import { authorizationHeader } from '@hub/ocpi';
import { DependencyUnavailable } from '@hub/core';
import { createLogger, Registry } from '@hub/observability';
import { inMemoryHub, type InMemoryHub } from '@hub/testing';
import { createDependencyGuard, createGuardMetrics, DependencyRefused, type DependencyGuard } from '../src/dependency-guards.ts';
import { RETRY_AFTER_SECONDS } from '../src/http.ts';
import { cpo, ingressOn, tokens } from './support/ingress-spec.ts';
import { session } from './support/objects.ts';

describe('fast refusals (the Kafka circuit breaker in the composed ingress)', () => {
  const clock = { t: 1_000_000 };
  const registry = new Registry();
  const guards: DependencyGuard[] = [];
  const metrics = createGuardMetrics(registry, () => guards);
  const logged: string[] = [];
  const logger = createLogger({ service: 'ingress-test', level: 'info', stream: new Writable({ write: (chunk: Buffer, _e, done) => (logged.push(chunk.toString()), done()) }) });
  const guard = createDependencyGuard('kafka', { enabled: true, failures: 2, openAfterMs: 1_000, cooldownMs: 5_000 }, { logger, refusals: metrics.refusals, now: () => clock.t });
  guards.push(guard);
  let hub: InMemoryHub;
  let server: Server;
  let base: string;
  let appendCalls = 0;

  before(async () => {
    hub = inMemoryHub();
    await cpo()(hub);
    const append = hub.events.append.bind(hub.events);
    hub.events.append = (topic, events) => ((appendCalls += 1), append(topic, events));
    server = createServer(ingressOn(hub, { kafkaGuard: guard }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const push = async (id: string) => {
    const res = await fetch(`${base}/ocpi/2.2.1/sessions/NL/CPA/${id}`, {
      method: 'PUT',
      headers: { authorization: authorizationHeader(tokens.cpo), 'content-type': 'application/json' },
      body: JSON.stringify(session(id)),
    });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as { status_code: number; timestamp?: string } };
  };
  const metric = async (name: string) => (await registry.getSingleMetric(name)?.get())?.values.find((v) => v.labels['dependency'] === 'kafka')?.value;

  it('answers 503 while Kafka fails, then refuses without calling it once the breaker opens', async () => {
    hub.events.unavailable();
    assert.equal((await push('S1')).status, 503);
    clock.t += 1_000;
    assert.equal((await push('S2')).status, 503);
    assert.equal(appendCalls, 2, 'both reached the event log');
    assert.equal(guard.state, 'open');

    const refused = await push('S3');
    assert.equal(refused.status, 503);
    assert.equal(refused.body.status_code, 3000, 'the OCPI envelope a timeout gives');
    assert.equal(typeof refused.body.timestamp, 'string');
    assert.equal(refused.retryAfter, String(RETRY_AFTER_SECONDS));
    assert.equal(appendCalls, 2, 'refused without calling the event log');
    assert.equal(await metric('hub_fast_refusals_total'), 1);
    assert.equal(await metric('hub_breaker_state'), 2);
    assert.equal(logged.filter((l) => l.includes('circuit breaker open')).length, 1, 'the opening is logged once');
    assert.ok(!logged.some((l) => l.includes(tokens.cpo)), 'no token in the logs');
  });

  it('after the cool-down one probe reaches Kafka; its success closes the breaker', async () => {
    hub.events.available();
    clock.t += 4_999;
    assert.equal((await push('S4')).status, 503, 'still cooling down');
    clock.t += 1;
    assert.equal((await push('S5')).body.status_code, 1000, 'the probe is accepted');
    assert.equal(guard.state, 'closed');
    assert.equal((await push('S6')).body.status_code, 1000);
    assert.equal(hub.events.appended(topics.sessions).length, 2);
    assert.equal(await metric('hub_breaker_state'), 0);
    assert.ok(logged.some((l) => l.includes('circuit breaker closed')));
  });
});

describe('the Kafka guard while brokers still answer (a leader failover)', () => {
  const quiet = createLogger({ service: 'ingress-test', level: 'error', stream: new Writable({ write: (_c, _e, done) => done() }) });
  const failing = () => Promise.reject(new DependencyUnavailable('kafka', 'append timed out'));
  const settle = () => new Promise((r) => setTimeout(r, 20));

  it('never opens while the cluster answers, and opens once it is silent', async () => {
    const clock = { t: 0 };
    const cluster = { answers: true };
    const guard = createDependencyGuard('kafka', { enabled: true, failures: 2, openAfterMs: 1_000, cooldownMs: 5_000 }, { logger: quiet, now: () => clock.t, answers: () => Promise.resolve(cluster.answers) });
    for (let i = 0; i < 10; i++) {
      await assert.rejects(guard.run(failing), DependencyUnavailable);
      await settle();
      clock.t += 600;
    }
    assert.equal(guard.state, 'closed', 'pushes keep waiting for the failover');
    cluster.answers = false;
    for (let i = 0; i < 3 && guard.state === 'closed'; i++) {
      await assert.rejects(guard.run(failing), DependencyUnavailable);
      await settle();
      clock.t += 600;
    }
    assert.equal(guard.state, 'open', 'no broker answers: refused at once');
    await assert.rejects(guard.run(failing), DependencyRefused);
  });

  it('a check that does not answer in time counts as silence (a hung broker)', async () => {
    const clock = { t: 0 };
    const guard = createDependencyGuard('kafka', { enabled: true, failures: 2, openAfterMs: 0, cooldownMs: 5_000 }, { logger: quiet, now: () => clock.t, answers: () => new Promise<boolean>(() => undefined) });
    await assert.rejects(guard.run(failing));
    await new Promise((r) => setTimeout(r, 1_100));
    await assert.rejects(guard.run(failing));
    assert.equal(guard.state, 'open');
  });
});
