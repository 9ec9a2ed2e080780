export * from './cli.ts';
