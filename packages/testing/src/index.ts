export * from './stack.ts';
export * from './partner-simulator.ts';
export * from './ocpi-client.ts';
export * from './service-process.ts';
export * from './given-stack.ts';
export * from './tcp-relay.ts';
export * from './api-spec.ts';
export * from './fakes/index.ts';
