// The hub's core (reference design, Layout): every port, the records that cross them, and the domain
// rules with no I/O. Adapters (event-log, store, partners) implement these ports; services use them.
// Nothing here does I/O or imports a driver or another hub package but @hub/ocpi and @hub/events
// (eslint.config.js keeps it so).
export * from './event-log.ts';
export * from './quarantine.ts';
export * from './position-bindings.ts';
export * from './object-path.ts';
export * from './read-model-records.ts';
export * from './read-model-store.ts';
export * from './delivery-records.ts';
export * from './delivery-store.ts';
export * from './command-store.ts';
export * from './charging-profile-store.ts';
export * from './advisory-lease.ts';
export * from './caller-lookup.ts';
export * from './client-info-recipients.ts';
export * from './driver-data-keys.ts';
export * from './partner-checks.ts';
export * from './rate-limiter.ts';
export * from './token-resend.ts';
export * from './session-fold.ts';
export * from './token-fold.ts';
export * from './merge-patch.ts';
export * from './session-patch.ts';
export * from './version-fields.ts';
export * from './utc-time.ts';
export * from './registry-model.ts';
export * from './registry.ts';
export * from './health.ts';
export * from './routing.ts';
export * from './failures.ts';
export * from './partner-calls.ts';
