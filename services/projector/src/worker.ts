import type { CommonConfig } from '@hub/config';
import { startServiceShell, type ServiceShell } from '@hub/service-kit';

// Projector: builds the location and tariff read models from their topics. The projections arrive
// with the locations/tariffs work (issue #3); until then the service runs its shell (operator port,
// health of Postgres and Kafka) and consumes nothing, so no offset is recorded that a later
// projection would have to skip over.
export async function startWorker(config: CommonConfig): Promise<ServiceShell> {
  const shell = await startServiceShell('projector', config);
  shell.logger.info('projector running; no projections registered yet', { operatorPort: shell.operator.port });
  return shell;
}
