export { startWorker } from './worker.ts';
export * from './config.ts';
