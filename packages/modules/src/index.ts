export * from './location-events.ts';
export * from './apply.ts';
export * from './cdr-event.ts';
export * from './modules.ts';
export * from './token-id.ts';
