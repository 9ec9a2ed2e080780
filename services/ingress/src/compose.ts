import type { DeliveryStore, EventLog, ReadModelStore } from '@hub/core';
import { createHttpMetrics, Counter, type Logger, type Registry } from '@hub/observability';
import { topicOf } from '@hub/modules';
import { dispatcherWait } from '@hub/modules/http';
import { checkOutboundUrl } from '@hub/partners';
import { projectionWait } from '@hub/service-kit';
import { createIngressApp, type IngressDeps } from './app.ts';
import type { IngressConfig } from './config.ts';

// The ingress's composition root: the one place the app is put together from its ports and settings.
// start.ts hands it the Postgres and Kafka adapters, the in-process route tests
// (test/support/ingress-spec.ts) the in-memory ones of @hub/testing, so both run the same wiring.

/** The ports the ingress app runs on. */
export interface IngressPorts {
  readonly callers: IngressDeps['callers'];
  readonly store: IngressDeps['store'];
  readonly validator: IngressDeps['validator'];
  /** Partner calls of the credentials exchange. */
  readonly partners: IngressDeps['credentials']['partners'];
  /** Real-time forwards (token authorization), with their own short timeout. */
  readonly realtime: IngressDeps['tokens']['realtime'];
  readonly cipher: IngressDeps['credentials']['cipher'];
  /** Appends, CDR lookups, and the offsets read-your-writes waits for. */
  readonly eventLog: IngressDeps['objects']['eventLog'] & IngressDeps['cdrs']['eventLog'] & Pick<EventLog, 'latestOffsets' | 'physical'>;
  /** Read models, and the positions a push waits for (read your writes). */
  readonly readModels: IngressDeps['objects']['readModels'] & Pick<ReadModelStore, 'positions'>;
  readonly rateLimiter: IngressDeps['objects']['rateLimiter'];
  /** CDR receipts and sessions, and the dispatcher's positions a session PATCH waits for. */
  readonly deliveries: IngressDeps['deliveries'] & Pick<DeliveryStore, 'deliveryPositions'>;
  readonly routing: IngressDeps['routing'];
  readonly commands: IngressDeps['commands']['commands'];
  readonly chargingProfiles: IngressDeps['chargingProfiles']['chargingProfiles'];
}

/** The settings the app takes from the ingress configuration (docs/reference/configuration.md). */
export type IngressSettings = Pick<
  IngressConfig,
  | 'hub'
  | 'sandbox'
  | 'accessLog'
  | 'maxBodyBytes'
  | 'defaultPageLimit'
  | 'maxPageLimit'
  | 'allowHttpPartners'
  | 'partnerAllowedHosts'
  | 'locationListsPerMinute'
  | 'tokenListsPerMinute'
  | 'readYourWritesTimeoutMs'
  | 'dispatcherGroupId'
  | 'cdrSettleSeconds'
  | 'eventSource'
  | 'authorizationsPerMinute'
  | 'commandsPerMinute'
  | 'commandGraceSeconds'
  | 'chargingProfilesPerMinute'
  | 'responseUrlAllowedHosts'
>;

export interface IngressRuntime {
  /** The base of every URL the hub hands out (HUB_PUBLIC_URL, or the address it listens on). */
  readonly publicBaseUrl: string;
  readonly logger: Logger;
  /** Where the app's metrics are registered (the operator port's /metrics). */
  readonly metrics: Registry;
  /** After a registry change: callers' cache invalidated, outbox published promptly. */
  readonly onRegistryChange: () => void;
}

// Long because: one call whose argument lists every dependency of the app, by module.
export function composeIngressApp(ports: IngressPorts, settings: IngressSettings, runtime: IngressRuntime) {
  const { metrics } = runtime;
  const policy = { allowHttp: settings.allowHttpPartners, allowedHosts: settings.partnerAllowedHosts };
  return createIngressApp({
    callers: ports.callers,
    store: ports.store,
    credentials: { partners: ports.partners, cipher: ports.cipher, hub: { ...settings.hub, versionsUrl: `${runtime.publicBaseUrl}/ocpi/versions` }, source: 'ingress' },
    validator: ports.validator,
    publicBaseUrl: runtime.publicBaseUrl,
    sandbox: settings.sandbox,
    logger: runtime.logger,
    httpMetrics: createHttpMetrics(metrics),
    accessLog: settings.accessLog,
    limits: { maxBodyBytes: settings.maxBodyBytes, defaultPageLimit: settings.defaultPageLimit, maxPageLimit: settings.maxPageLimit },
    objects: {
      eventLog: ports.eventLog,
      readModels: ports.readModels,
      wait: projectionWait(ports.eventLog, ports.readModels, topicOf, settings.readYourWritesTimeoutMs),
      rateLimiter: ports.rateLimiter,
      limits: {
        defaultLimit: settings.defaultPageLimit,
        maxLimit: settings.maxPageLimit,
        listsPerMinute: { 'locations-list': settings.locationListsPerMinute, 'tokens-list': settings.tokenListsPerMinute },
      },
    },
    deliveries: ports.deliveries,
    cdrs: {
      eventLog: ports.eventLog,
      settleSeconds: settings.cdrSettleSeconds,
      source: settings.eventSource,
      reappends: new Counter({
        name: 'hub_cdr_reappends_total',
        help: 'CDRs whose append had not completed, taken again (a CPO retry at the ingress, the relay at the prober): appended, or already_present in ocpi.cdrs.v1 and only marked appended',
        labelNames: ['outcome'],
        registers: [metrics],
      }),
    },
    routing: ports.routing,
    dispatcherWait: dispatcherWait(ports.eventLog, ports.deliveries, settings.dispatcherGroupId, settings.readYourWritesTimeoutMs),
    commands: {
      commands: ports.commands,
      checkOutboundUrl: (raw: string) => checkOutboundUrl(policy, raw),
      perMinute: settings.commandsPerMinute,
      graceSeconds: settings.commandGraceSeconds,
      responseUrlHosts: settings.responseUrlAllowedHosts,
    },
    chargingProfiles: {
      chargingProfiles: ports.chargingProfiles,
      perMinute: settings.chargingProfilesPerMinute,
      forwarded: new Counter({ name: 'hub_charging_profile_requests_total', help: 'ChargingProfile set, get and clear requests of eMSPs by operation and outcome (the CPO answer, or the hub answering itself: not_supported_by_hub, rejected_by_hub, not_answered)', labelNames: ['operation', 'outcome'], registers: [metrics] }),
      results: new Counter({ name: 'hub_charging_profile_results_total', help: 'CPO charging profile results (kind set, get, clear: forwarded or late) and ActiveChargingProfile updates (kind active_profile: queued) received', labelNames: ['kind', 'outcome'], registers: [metrics] }),
    },
    tokens: {
      realtime: ports.realtime,
      cipher: ports.cipher,
      perMinute: settings.authorizationsPerMinute,
      outcomes: new Counter({ name: 'hub_authorizations_total', help: 'Real-time token authorizations by outcome (direction cpo_to_emsp for CPO-initiated ones)', labelNames: ['outcome', 'direction'], registers: [metrics] }),
    },
    onRegistryChange: runtime.onRegistryChange,
  });
}
