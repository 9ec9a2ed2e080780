// @hub/modules/http: the modules' HTTP half, for the ingress alone (it loads express): each module's
// route handlers (module-routes.ts), the translating edge of every OCPI version, and the kit the
// handlers share (answers, path and ownership checks, pagination, 405s).
export * from './answers.ts';
export * from './routing-headers.ts';
export * from './method-not-allowed.ts';
export * from './mounts.ts';
export * from './module-routes.ts';
export * from './version-edge.ts';
export * from './known-sessions.ts';
export * from './ports.ts';
export * from './pagination.ts';
export * from './ocpi-objects.ts';
export * from './object-reads.ts';
export * from './response-url.ts';
export * from './relayed-requests.ts';
export * from './charging-objects.ts';
export type { CdrAppendDeps } from '../cdrs/routes.ts';
export type { TokensDeps } from '../tokens/authorize-routes.ts';
export type { CommandsDeps } from '../commands/routes.ts';
export { TIMEOUT_211_SECONDS } from '../commands/routes.ts';
export type { ChargingProfilesDeps, ChargingProfilesVersion } from '../chargingprofiles/routes.ts';
