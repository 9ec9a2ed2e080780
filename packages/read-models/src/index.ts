export * from './location-events.ts';
export * from './apply.ts';
