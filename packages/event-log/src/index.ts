export * from './kafka-config.ts';
export * from './kafka-event-log.ts';
export * from './subscription.ts';
export * from './position-check.ts';
export * from './topics-admin.ts';
export * from './kafka-failure.ts';
export * from './kafka-access.ts';
export * from './fetch-limits.ts';
