import { Gauge } from '@hub/observability';
import { consumerLagGauge, startServiceShell, type ServiceShell } from '@hub/service-kit';
import { postgresChargingProfileStore, postgresClientInfoRecipients, postgresCommandStore, postgresDeliveryStore, postgresReadModelStore, postgresRoutingDirectory, postgresTokenResend } from '@hub/store';
import { startChargingProfileTimeouts } from './charging-profile-timeouts.ts';
import { startCommandTimeouts } from './command-timeouts.ts';
import type { DispatcherConfig } from './config.ts';
import { startDeliveryConsumer } from './delivery-consumer.ts';
import { deliveryWorkers } from './delivery-workers.ts';
import { startRegistryConsumer } from './registry-consumer.ts';
import { sessionPatchReporter } from './session-patch.ts';

// Dispatcher (interface document, Events; reference design, Delivery rules). Three parts:
// 1. a consumer group over the sessions and CDRs topics that turns each event into a durable delivery
//    record in Postgres and only then commits the Kafka offset (never lost, never blocked;
//    delivery-consumer.ts);
// 2. delivery workers that send due records to the eMSP's receiver with retries and backoff, a few
//    at a time per eMSP, so one eMSP down or slow delays no other (delivery-workers.ts);
// 3. command timeouts: TIMEOUT for commands whose CPO never called back (command-timeouts.ts), and
//    the same for charging profile requests (charging-profile-timeouts.ts);
// 4. a consumer group over the registry topic: ClientInfo pushes and token re-sends to newly routed
//    CPOs as delivery records (registry-consumer.ts).

export async function startWorker(config: DispatcherConfig): Promise<ServiceShell> {
  const shell = await startServiceShell('dispatcher', config, { secretKey: config.secretKey });
  const { logger, metrics, pool } = shell;
  const deliveries = postgresDeliveryStore(pool);
  const backlogGauge = new Gauge({ name: 'hub_deliveries', help: 'Delivery records not delivered, by receiving party (label emsp: the eMSP, or the CPO of a token) and state (pending = retry backlog, dead = dead letters)', labelNames: ['emsp', 'state'], registers: [metrics] });
  const lag = consumerLagGauge(metrics);

  const readModels = postgresReadModelStore(pool);
  const workers = deliveryWorkers(config, shell, {
    deliveries,
    routing: postgresRoutingDirectory(pool),
    locationOf: (cpo, locationId) => readModels.findObject('locations', { ...cpo, id: locationId }),
    tokensByContractId: (contractId, cpo) => readModels.tokensByContractId(contractId, cpo),
  });
  // 1. Consumer: events -> delivery records (delivery-consumer.ts).
  const consumer = await startDeliveryConsumer(config, shell, { deliveries, lag, wake: () => workers.wake(), reportSessionPatches: sessionPatchReporter(metrics, logger) });
  // 4. Registry changes -> ClientInfo and token records (registry-consumer.ts).
  const registry = await startRegistryConsumer(config, shell, { deliveries, clientInfo: postgresClientInfoRecipients(pool), tokens: postgresTokenResend(pool), tokenProjection: postgresReadModelStore(pool), lag, wake: () => workers.wake() });
  // 2. Delivery workers.
  await workers.start();
  // 3. Commands whose CPO sent no result by its timeout (plus grace): the hub tells the eMSP TIMEOUT
  // itself; a result arriving later is recorded by the ingress and not forwarded.
  const timeouts = startCommandTimeouts(shell, { commands: postgresCommandStore(pool), deliveries });
  const profileTimeouts = startChargingProfileTimeouts(shell, { chargingProfiles: postgresChargingProfileStore(pool), deliveries });
  const backlogTimer = setInterval(() => {
    void deliveries
      .backlog()
      .then((rows) => {
        backlogGauge.reset();
        for (const r of rows) backlogGauge.set({ emsp: r.emsp, state: r.state }, r.count);
      })
      .catch(() => undefined);
  }, 5_000);
  logger.info('dispatcher running', { operatorPort: shell.operator.port, group: config.groupId });
  return {
    ...shell,
    async stop() {
      workers.halt();
      timeouts.stop();
      profileTimeouts.stop();
      clearInterval(backlogTimer);
      // Side by side: each waits for its fetch in flight (about 5 s with Kafka gone: @hub/event-log
      // platformatic-subscription.ts, STOP_FETCH_WAIT_MS; runService's deadline bounds the whole stop).
      await Promise.all([consumer.stop(), registry.stop()]);
      await workers.drain();
      await shell.stop();
    },
  };
}
