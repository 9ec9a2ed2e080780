import { configReader, readConsumerConfig, readSecretKey, type ConsumerConfig, type Env } from '@hub/config';

// The projector's settings (docs/reference/configuration.md): main.ts hands it the environment.

export interface ProjectorConfig {
  readonly consumer: ConsumerConfig;
  readonly groupId: string;
  /** HUB_SECRET_KEY: wraps the data keys that open drivers' personal fields in token events (docs/decisions/0013-erasure-by-destroying-data-keys.md). */
  readonly secretKey: Buffer;
}

export function readProjectorConfig(env: Env): ProjectorConfig {
  const r = configReader(env);
  const consumer = readConsumerConfig(r, 9465);
  const groupId = r.string('PROJECTOR_GROUP_ID', 'projector');
  const secretKey = readSecretKey(r);
  r.done();
  return { consumer, groupId, secretKey };
}
