import { configReader, type ConfigReader, readConsumerConfig, readSecretKey, type ConsumerConfig, type Env } from '@hub/config';

// The projector's settings (docs/reference/configuration.md): main.ts hands it the environment.

export interface ProjectorConfig {
  readonly consumer: ConsumerConfig;
  readonly groupId: string;
  /** HUB_SECRET_KEY: wraps the data keys that open drivers' personal fields in token events (docs/decisions/0013-erasure-by-destroying-data-keys.md). */
  readonly secretKey: Buffer;
  /**
   * PROJECTOR_START_FROM: 'snapshot' (the deployment's projector) loads an empty read model from the
   * snapshot topics and keeps them in step; 'history' (a verification replay into another database)
   * reads the change topics from their start and neither loads nor writes a snapshot, since the
   * snapshot belongs to the live read model (docs/decisions/0014-snapshot-topics.md).
   */
  readonly startFrom: 'snapshot' | 'history';
}

/** `r` is a recording reader when infra/generate-configuration-doc.ts lists the variables read. */
export function readProjectorConfig(env: Env, r: ConfigReader = configReader(env)): ProjectorConfig {
  const consumer = readConsumerConfig(r, 9465);
  const groupId = r.string('PROJECTOR_GROUP_ID', 'projector');
  const secretKey = readSecretKey(r);
  const startFrom = r.string('PROJECTOR_START_FROM', 'snapshot');
  if (startFrom !== 'snapshot' && startFrom !== 'history') r.problem(`PROJECTOR_START_FROM must be snapshot or history, got "${startFrom}"`);
  r.done();
  return { consumer, groupId, secretKey, startFrom: startFrom === 'history' ? 'history' : 'snapshot' };
}
