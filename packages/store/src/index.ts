export * from './pool.ts';
export * from './migrate.ts';
export * from './postgres-registry-store.ts';
export * from './cached-caller-lookup.ts';
export * from './outbox.ts';
export * from './postgres-read-model-store.ts';
export * from './rate-limiter.ts';
export * from './postgres-delivery-store.ts';
