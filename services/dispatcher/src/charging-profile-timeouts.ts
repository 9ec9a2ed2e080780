import { chargingProfileEventTypes, newEvent, topics } from '@hub/events';
import type { ServiceShell } from '@hub/service-kit';
import type { ChargingProfileStore } from '@hub/core';
import type { DeliveryQueue } from '@hub/core';

/**
 * What the hub sends the eMSP when the CPO gave no result within the timeout it named (plus grace):
 * ChargingProfileResultType has no TIMEOUT, so REJECTED, "not applied as far as the hub knows"
 * (docs/decisions/0007-charging-profile-timeout-result.md).
 */
export const CHARGING_PROFILE_TIMEOUT_RESULT = { result: 'REJECTED' } as const;

/** Every second: charging profile requests past their timeout get the hub's result, appended and queued for the eMSP. */
export function startChargingProfileTimeouts(shell: ServiceShell, deps: { chargingProfiles: ChargingProfileStore; deliveries: Pick<DeliveryQueue, 'enqueue'> }): { stop(): void } {
  const { logger, eventLog } = shell;
  const { chargingProfiles, deliveries } = deps;
  const expiry = setInterval(() => {
    void chargingProfiles
      .expire()
      .then(async (expired) => {
        if (expired.length === 0) return;
        await eventLog.append(
          topics.chargingProfiles,
          expired.map((r) =>
            newEvent({
              type: chargingProfileEventTypes.timedOut,
              source: 'dispatcher',
              subject: r.id,
              key: r.id,
              data: { operation: r.operation, result: CHARGING_PROFILE_TIMEOUT_RESULT },
              from: `${r.cpo.countryCode}/${r.cpo.partyId}`,
              to: `${r.emsp.countryCode}/${r.emsp.partyId}`,
              ...(r.correlationId ? { correlationId: r.correlationId } : {}),
            }),
          ),
        );
        await deliveries.enqueue(
          expired.map((r) => ({
            kind: 'charging_profile_result' as const,
            emsp: r.emsp,
            cpo: r.cpo,
            objectId: r.id,
            partition: 0,
            offset: '0',
            payload: { ...CHARGING_PROFILE_TIMEOUT_RESULT },
            correlationId: r.correlationId,
            eventTime: new Date().toISOString(),
            targetUrl: r.responseUrl,
          })),
        );
      })
      .catch((e: unknown) => logger.warn('charging profile expiry failed; retried next second', { err: e }));
  }, 1_000);
  return { stop: () => clearInterval(expiry) };
}
