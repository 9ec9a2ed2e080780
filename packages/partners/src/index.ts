export * from './outbound-policy.ts';
export * from './ocpi-partner-client.ts';
