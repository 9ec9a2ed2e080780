export * from './cli.ts';
export * from './rebuild.ts';
