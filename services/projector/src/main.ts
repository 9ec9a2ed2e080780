// Projector: the only place that reads process.env.
import { configReader, readConsumerConfig } from '@hub/config';
import { runService } from '@hub/observability';
import { startWorker } from './worker.ts';

await runService(() => {
  const r = configReader(process.env);
  const config = readConsumerConfig(r, 9465);
  const groupId = r.string('PROJECTOR_GROUP_ID', 'projector');
  r.done();
  return startWorker(config, { groupId });
});
