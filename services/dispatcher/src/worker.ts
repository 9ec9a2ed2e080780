import type { CommonConfig } from '@hub/config';
import { startServiceShell, type ServiceShell } from '@hub/service-kit';

// Dispatcher: delivers sessions, CDRs and command results to eMSPs. Delivery arrives with the
// sessions/CDRs work (issue #4); until then the service runs its shell (operator port,
// health of Postgres and Kafka) and consumes nothing, so no offset is committed that later
// deliveries would skip over.
export async function startWorker(config: CommonConfig): Promise<ServiceShell> {
  const shell = await startServiceShell('dispatcher', config);
  shell.logger.info('dispatcher running; no deliveries registered yet', { operatorPort: shell.operator.port });
  return shell;
}
