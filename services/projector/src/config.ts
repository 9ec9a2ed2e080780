import { configReader, readConsumerConfig, type ConsumerConfig, type Env } from '@hub/config';

// The projector's settings (docs/reference/configuration.md): main.ts hands it the environment.

export interface ProjectorConfig {
  readonly consumer: ConsumerConfig;
  readonly groupId: string;
}

export function readProjectorConfig(env: Env): ProjectorConfig {
  const r = configReader(env);
  const consumer = readConsumerConfig(r, 9465);
  const groupId = r.string('PROJECTOR_GROUP_ID', 'projector');
  r.done();
  return { consumer, groupId };
}
