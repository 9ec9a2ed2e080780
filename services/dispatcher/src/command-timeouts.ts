import { commandEventTypes, newEvent, topics } from '@hub/events';
import type { ServiceShell } from '@hub/service-kit';
import type { CommandStore, DeliveryQueue } from '@hub/core';

/** Every second: commands past their timeout get TIMEOUT appended and queued for the eMSP. */
export function startCommandTimeouts(shell: ServiceShell, deps: { commands: CommandStore; deliveries: Pick<DeliveryQueue, 'enqueue'> }): { stop(): void } {
  const { logger, eventLog } = shell;
  const { commands, deliveries } = deps;
  // Commands whose CPO sent no result by its timeout (plus grace): the hub tells the eMSP TIMEOUT
  // itself; a result arriving later is recorded by the ingress and not forwarded.
  const expiry = setInterval(() => {
    void commands
      .expire()
      .then(async (expired) => {
        if (expired.length === 0) return;
        await eventLog.append(
          topics.commands,
          expired.map((c) => newEvent({ type: commandEventTypes.timedOut, source: 'dispatcher', subject: c.id, key: c.id, data: { result: { result: 'TIMEOUT' } }, ...(c.correlationId ? { correlationId: c.correlationId } : {}) })),
        );
        await deliveries.enqueue(
          expired.map((c) => ({
            kind: 'command_result' as const,
            emsp: c.emsp,
            cpo: c.cpo,
            objectId: c.id,
            partition: 0,
            offset: '0',
            payload: { result: 'TIMEOUT' },
            correlationId: c.correlationId,
            eventTime: new Date().toISOString(),
            targetUrl: c.responseUrl,
          })),
        );
      })
      .catch((e: unknown) => logger.warn('command expiry failed; retried next second', { err: e }));
  }, 1_000);
  return { stop: () => clearInterval(expiry) };
}
