// Dispatcher: the only place that reads process.env.
import { runService } from '@hub/observability';
import { readDispatcherConfig } from './config.ts';
import { startWorker } from './worker.ts';

await runService(() => startWorker(readDispatcherConfig(process.env)));
