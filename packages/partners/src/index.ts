export * from './outbound-policy.ts';
export * from './ocpi-partner-client.ts';
export * from './partner-check.ts';
export * from './tls-inspect.ts';
