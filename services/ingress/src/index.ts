export * from './app.ts';
export * from './config.ts';
export { startIngress, type RunningIngress } from './start.ts';
