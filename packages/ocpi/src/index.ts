export * from './errors.ts';
export * from './envelope.ts';
export * from './credentials-token.ts';
export * from './types.ts';
export * from './date-time.ts';
export * from './partner-headers.ts';
