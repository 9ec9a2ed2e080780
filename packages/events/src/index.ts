export * from './topics.ts';
export * from './envelope.ts';
export * from './registry-events.ts';
export * from './recipient.ts';
