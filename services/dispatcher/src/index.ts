export { startWorker } from './worker.ts';
