export * from './config.ts';
export * from './prober.ts';
