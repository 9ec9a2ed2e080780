import { Writable } from 'node:stream';
import { authorizationHeader, type PartyRole } from '@hub/ocpi';
import { createLogger, Registry } from '@hub/observability';
import { createSchemaValidator } from '@hub/schemas';
import { apiSpec, inMemoryHub, registerPlatform, type ApiRequest, type Arrange, type InMemoryHub, type PlatformGiven } from '@hub/testing';
import type { IngressLimits } from '../../src/app.ts';
import { composeIngressApp, type IngressSettings } from '../../src/compose.ts';
import { createDependencyGuard, guardEventLog, type DependencyGuard } from '../../src/dependency-guards.ts';

// The ingress in process on the in-memory ports of @hub/testing: no Kafka, no Postgres. Each test gets
// a fresh hub (given), one request (when) and its expectations (then).

export const BASE = 'http://hub.test';
const validator = createSchemaValidator();
const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });

export const limits: IngressLimits = { maxBodyBytes: 64 * 1024, defaultPageLimit: 2, maxPageLimit: 3 };
export const perMinute = { locationLists: 5, tokenLists: 5, authorizations: 5, commands: 5, chargingProfiles: 5 };

/** Breaker settings as start.ts reads them by default (@hub/config readBreakerConfig). */
export const defaultBreaker = { enabled: true, failures: 5, openAfterMs: 1_500, cooldownMs: 1_000 };

/** The settings of the in-process ingress: small pages and limits, so paging and limits are reached. */
export const settings: IngressSettings = {
  hub: { countryCode: 'NL', partyId: 'HUB', name: 'Test hub' },
  sandbox: false,
  accessLog: 'errors',
  maxBodyBytes: limits.maxBodyBytes,
  defaultPageLimit: limits.defaultPageLimit,
  maxPageLimit: limits.maxPageLimit,
  allowHttpPartners: false,
  partnerAllowedHosts: [],
  locationListsPerMinute: perMinute.locationLists,
  tokenListsPerMinute: perMinute.tokenLists,
  readYourWritesTimeoutMs: 50,
  dispatcherGroupId: 'dispatcher',
  cdrSettleSeconds: 60,
  eventSource: 'urn:ocpi:NL:HUB',
  authorizationsPerMinute: perMinute.authorizations,
  commandsPerMinute: perMinute.commands,
  commandGraceSeconds: 30,
  chargingProfilesPerMinute: perMinute.chargingProfiles,
  responseUrlAllowedHosts: [],
};

/**
 * The app through the composition root start.ts uses (compose.ts), on the in-memory ports, with the
 * event log behind the Kafka circuit breaker as start.ts puts it (default settings unless the test
 * passes its own guard).
 */
export function ingressOn(hub: InMemoryHub, options: { kafkaGuard?: DependencyGuard; sandbox?: boolean } = {}) {
  const logger = createLogger({ service: 'ingress-test', level: 'error', stream: quiet });
  const eventLog = guardEventLog(hub.events, options.kafkaGuard ?? createDependencyGuard('kafka', defaultBreaker, { logger }));
  return composeIngressApp(
    {
      callers: hub.callers,
      store: hub.registry,
      validator,
      partners: hub.partners,
      realtime: hub.realtime,
      cipher: hub.cipher,
      eventLog,
      readModels: hub.readModels,
      rateLimiter: hub.rateLimiter,
      deliveries: hub.deliveries,
      routing: hub.routing,
      commands: hub.commands,
      chargingProfiles: hub.chargingProfiles,
    },
    { ...settings, sandbox: options.sandbox ?? false },
    { publicBaseUrl: BASE, logger, metrics: new Registry(), onRegistryChange: () => hub.callers.invalidate() },
  );
}

export const ingress = apiSpec(() => {
  const hub = inMemoryHub();
  return { world: hub, handler: ingressOn(hub) };
});

// Who calls in these tests: one CPO platform, one eMSP platform, and a platform that is both.
export const CPO: PartyRole = { countryCode: 'NL', partyId: 'CPA', role: 'CPO' };
export const EMSP: PartyRole = { countryCode: 'DE', partyId: 'EMB', role: 'EMSP' };
export const tokens = { cpo: 'cpo-token-1', emsp: 'emsp-token-1', other: 'other-token-1' } as const;

/** Given a platform (registered through the RegistryStore port). */
export const platform = (given: PlatformGiven): Arrange<InMemoryHub> => (hub) => registerPlatform(hub.registry, given, (p) => hub.cipher.seal(p));
export const cpo = (extra: Partial<PlatformGiven> = {}) => platform({ parties: [CPO], token: tokens.cpo, ...extra });
export const emsp = (extra: Partial<PlatformGiven> = {}) => platform({ parties: [EMSP], token: tokens.emsp, ...extra });
/** Given an active routing rule between the eMSP and the CPO. */
export const routed = (emspRef = EMSP, cpoRef = CPO): Arrange<InMemoryHub> => (hub) => hub.registry.setRoutingRule(emspRef, cpoRef, true, []);

/** A request with the OCPI 2.2.1 Authorization header (Base64 token). */
export function as(token: string, request: ApiRequest): ApiRequest {
  return { ...request, headers: { authorization: authorizationHeader(token), ...request.headers } };
}
