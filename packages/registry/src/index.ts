export * from './credentials.ts';
export * from './operations.ts';
export * from './probe.ts';
export * from './token-cipher.ts';
export * from './outbox-relay.ts';
export * from './versions.ts';
export * from './driver-data.ts';
