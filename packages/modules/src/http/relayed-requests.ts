import type { DeliveryQueue, OcpiPartnerClient, RateLimiter, RoutingDirectory, TokenCipher } from '@hub/core';
import type { SchemaValidator } from '@hub/schemas';
import type { EventAppender } from './ports.ts';
import type { ResponseUrlRules } from './response-url.ts';
import type { ModuleRouteDeps } from './mounts.ts';

/**
 * What relaying an eMSP's request to a CPO in real time needs, whatever the module (commands,
 * chargingprofiles: mod_commands.asciidoc and mod_charging_profiles.asciidoc, each "via the hub"):
 * the CPO's receiver, the call, the rewritten response_url, the events, and the result's delivery.
 */
export interface RelayedRequestDeps extends ResponseUrlRules {
  readonly targets: RoutingDirectory;
  /** Where a CPO's result waits for delivery to the eMSP's response_url. */
  readonly deliveries: Pick<DeliveryQueue, 'enqueue'>;
  readonly eventLog: EventAppender;
  readonly realtime: OcpiPartnerClient;
  readonly cipher: TokenCipher;
  readonly rateLimiter: RateLimiter;
  readonly validator: SchemaValidator;
  readonly publicBaseUrl: string;
  /** Requests a minute per eMSP party. */
  readonly perMinute: number;
  /** Seconds past the CPO's own timeout before the hub answers the eMSP itself. */
  readonly graceSeconds: number;
}

/** What every relayed request takes from the ingress's deps; the module adds its store, budget and grace. */
export function relayedRequestDeps(deps: ModuleRouteDeps): Omit<RelayedRequestDeps, 'perMinute' | 'graceSeconds' | 'checkOutboundUrl' | 'responseUrlHosts'> {
  return {
    targets: deps.routing,
    deliveries: deps.deliveries,
    eventLog: deps.objects.eventLog,
    realtime: deps.tokens.realtime,
    cipher: deps.tokens.cipher,
    rateLimiter: deps.objects.rateLimiter,
    validator: deps.validator,
    publicBaseUrl: deps.publicBaseUrl,
    registeredHosts: (platformId: string) => deps.commands.commands.registeredHosts(platformId),
  };
}
