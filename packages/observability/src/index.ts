export * from './logger.ts';
export * from './metrics.ts';
export * from './request-context.ts';
export * from './operator-server.ts';
export * from './run-service.ts';
