import type { Request, RequestHandler, Response } from 'express';
import { chargingProfileEventTypes, newEvent, topics } from '@hub/events';
import { HubError, partyKey } from '@hub/ocpi';
import { describeViolations } from '@hub/schemas';
import type { ChargingProfileResult } from '@hub/schemas/generated/ocpi/charging_profile_result';
import { handle, send } from '../http/answers.ts';
import { asJson } from '../http/ocpi-objects.ts';
import type { ChargingProfilesDeps, ChargingProfilesVersion } from './routes.ts';

// The callback a CPO posts its ChargingProfileResult to (mod_charging_profiles.asciidoc, Flow): the
// response_url the hub gave it in place of the eMSP's.

/** POST /ocpi/{2.2.1,2.3.0}/chargingprofiles/callback/{request_id}: the CPO's result; no authentication, as the commands callback. */
export function chargingProfileCallbackHandlers(deps: Pick<ChargingProfilesDeps, 'chargingProfiles' | 'deliveries' | 'eventLog' | 'validator' | 'results'>, version: ChargingProfilesVersion = '2.2.1'): Record<string, RequestHandler> {
  const handlers: Record<string, RequestHandler> = {};
  handlers['POST chargingprofiles/callback/{request_id}'] = handle(async (req: Request, res: Response) => {
    const id = String(req.params['request_id']);
    // Refused without a trace of whether the id exists: a guessed id learns nothing.
    const inVersion = version === '2.3.0' ? deps.validator.validate('ocpi-2.3.0/charging_profile_result.json', req.body).violations : [];
    const { document, violations } = deps.validator.validate('ocpi/charging_profile_result.json', req.body);
    if (inVersion.length > 0 || violations.length > 0) throw new HubError('INVALID_PARAMETERS', { detail: describeViolations(inVersion.length > 0 ? inVersion : violations) });
    const result = document as ChargingProfileResult;
    const { outcome, request } = await deps.chargingProfiles.result(id, asJson(result));
    if (outcome === 'unknown' || !request) throw new HubError('NOT_FOUND', { detail: 'no charging profile request waits for a result under this id' });
    await deps.eventLog.append(topics.chargingProfiles, [
      newEvent({
        type: chargingProfileEventTypes.resultReceived,
        source: 'ingress',
        subject: id,
        key: id,
        data: { operation: request.operation, result, forwarded: outcome === 'forward' },
        correlationId: request.correlationId ?? req.ctx.correlationId,
        from: partyKey(request.cpo),
        to: partyKey(request.emsp),
      }),
    ]);
    if (outcome === 'forward') {
      await deps.deliveries.enqueue([
        {
          kind: 'charging_profile_result',
          emsp: request.emsp,
          cpo: request.cpo,
          objectId: id,
          partition: 0,
          offset: '0',
          payload: asJson(result),
          correlationId: request.correlationId,
          eventTime: new Date().toISOString(),
          targetUrl: request.responseUrl,
        },
      ]);
    }
    deps.results?.inc({ kind: request.operation.toLowerCase(), outcome: outcome === 'forward' ? 'forwarded' : 'late' });
    // A result after the hub already answered for the CPO is recorded, not forwarded.
    send(res, 200, { status_code: 1000, timestamp: new Date().toISOString(), ...(outcome === 'late' ? { status_message: 'recorded; the request had timed out and the eMSP was told so' } : {}) });
  });
  return handlers;
}
