import { Writable } from 'node:stream';
import { authorizationHeader, type PartyRole } from '@hub/ocpi';
import { Counter, createHttpMetrics, createLogger, Registry } from '@hub/observability';
import { createSchemaValidator } from '@hub/schemas';
import { apiSpec, inMemoryHub, registerPlatform, type ApiRequest, type Arrange, type InMemoryHub, type PlatformGiven } from '@hub/testing';
import { createIngressApp, type IngressLimits } from '../../src/app.ts';
import { createDependencyGuard, guardEventLog, type DependencyGuard } from '../../src/dependency-guards.ts';
import { dispatcherWait } from '../../src/known-sessions.ts';
import { topicOf } from '@hub/modules';
import { projectionWait } from '@hub/service-kit';

// The ingress in process on the in-memory ports of @hub/testing: no Kafka, no Postgres. Each test gets
// a fresh hub (given), one request (when) and its expectations (then).

export const BASE = 'http://hub.test';
const validator = createSchemaValidator();
const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });

export const limits: IngressLimits = { maxBodyBytes: 64 * 1024, defaultPageLimit: 2, maxPageLimit: 3 };
export const perMinute = { locationLists: 5, tokenLists: 5, authorizations: 5, commands: 5, chargingProfiles: 5 };

/** Breaker settings as start.ts reads them by default (@hub/config readBreakerConfig). */
export const defaultBreaker = { enabled: true, failures: 5, openAfterMs: 1_500, cooldownMs: 1_000 };

/**
 * The app as start.ts composes it: the event log behind the Kafka circuit breaker (a guard with the
 * default settings unless the test passes its own).
 */
export function ingressOn(hub: InMemoryHub, options: { kafkaGuard?: DependencyGuard; sandbox?: boolean } = {}) {
  const registry = new Registry();
  const logger = createLogger({ service: 'ingress-test', level: 'error', stream: quiet });
  const eventLog = guardEventLog(hub.events, options.kafkaGuard ?? createDependencyGuard('kafka', defaultBreaker, { logger }));
  return createIngressApp({
    callers: hub.callers,
    store: hub.registry,
    credentials: { partners: hub.partners, cipher: hub.cipher, hub: { countryCode: 'NL', partyId: 'HUB', name: 'Test hub', versionsUrl: `${BASE}/ocpi/versions` }, source: 'ingress' },
    validator,
    publicBaseUrl: BASE,
    ...(options.sandbox === undefined ? {} : { sandbox: options.sandbox }),
    logger,
    httpMetrics: createHttpMetrics(registry),
    accessLog: 'errors',
    limits,
    onRegistryChange: () => hub.callers.invalidate(),
    objects: {
      eventLog,
      readModels: hub.readModels,
      wait: projectionWait(eventLog, hub.readModels, topicOf, 50),
      rateLimiter: hub.rateLimiter,
      limits: { defaultLimit: limits.defaultPageLimit, maxLimit: limits.maxPageLimit, listsPerMinute: { 'locations-list': perMinute.locationLists, 'tokens-list': perMinute.tokenLists } },
    },
    deliveries: hub.deliveries,
    cdrs: { eventLog: hub.events, settleSeconds: 60, source: 'urn:ocpi:NL:HUB' },
    routing: hub.routing,
    dispatcherWait: dispatcherWait(eventLog, hub.deliveries, 'dispatcher', 50),
    commands: {
      commands: hub.commands,
      policy: { allowHttp: false, allowedHosts: [] },
      perMinute: perMinute.commands,
      graceSeconds: 30,
      responseUrlHosts: [],
    },
    chargingProfiles: { chargingProfiles: hub.chargingProfiles, perMinute: perMinute.chargingProfiles },
    tokens: {
      realtime: hub.realtime,
      cipher: hub.cipher,
      perMinute: perMinute.authorizations,
      outcomes: new Counter({ name: 'hub_authorizations_total', help: 'test', labelNames: ['outcome', 'direction'], registers: [registry] }),
    },
  });
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
