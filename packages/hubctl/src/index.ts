export * from './cli.ts';
export * from './rebuild.ts';
export * from './replay.ts';
export * from './config.ts';
