// Projector: the only place that reads process.env.
import { runService } from '@hub/observability';
import { readProjectorConfig } from './config.ts';
import { startWorker } from './worker.ts';

await runService(() => {
  const config = readProjectorConfig(process.env);
  return startWorker(config.consumer, { groupId: config.groupId, secretKey: config.secretKey, startFrom: config.startFrom });
});
