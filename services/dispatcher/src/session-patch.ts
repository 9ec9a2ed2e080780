import { sessionEventTypes, tokenEventTypes } from '@hub/events';
import { Counter, type Logger, type Registry } from '@hub/observability';
import type { EnqueueReport } from '@hub/core';

// Session PATCH events in the dispatcher (mod_sessions.asciidoc, PATCH Method; README, Delivery
// rules). The consumer marks them (`patch: true`) and the delivery store merges each into the newest
// full session it holds and delivers that (packages/core/src/session-fold.ts). A PATCH it does not
// apply is never dropped silently: it is counted and logged here.
// - superseded: its last_updated is older than the session it would merge into (newest wins, as for
//   PUT): the eMSP already has, or is getting, a newer state. Logged at info.
// - no_session: no full session to merge into. The ingress accepts a PATCH only of a session it holds,
//   so this means the PUT's event is gone (beyond retention) while its rows were lost and replayed,
//   or the event was appended by something other than the ingress. The full session cannot be
//   rebuilt from a PATCH: logged as an error, for the operator to have the CPO PUT the session again.

/** Whether a consumed record is a PATCH (its payload is a partial Session or Token, merged by the store). */
export const isPatch = (type: string): boolean => type === sessionEventTypes.sessionPatched || type === tokenEventTypes.tokenPatched;

export function sessionPatchReporter(metrics: Registry, logger: Logger): (report: EnqueueReport) => void {
  const patches = new Counter({
    name: 'hub_session_patches_total',
    help: 'Session PATCH events by outcome: applied (merged and delivered), superseded (older than the session held), no_session (no PUT to merge into)',
    labelNames: ['outcome'],
    registers: [metrics],
  });
  // token-fold.ts: a token PATCH row is not applied for a CPO that holds no version of the token (it
  // gets the whole token when it is routed) or a newer one. Expected, so counted, not logged per row.
  const tokenPatches = new Counter({ name: 'hub_token_patches_unapplied_total', help: 'Token PATCH rows not applied for a CPO: it holds no version of the token, or a newer one', registers: [metrics] });
  return (report) => {
    if (report.tokenPatchesUnapplied) tokenPatches.inc(report.tokenPatchesUnapplied);
    if (report.applied > 0) patches.inc({ outcome: 'applied' }, report.applied);
    for (const { input, reason } of report.unapplied) {
      const outcome = reason === 'superseded' ? 'superseded' : 'no_session';
      patches.inc({ outcome });
      const fields = { cpo: `${input.cpo.countryCode}/${input.cpo.partyId}`, sessionId: input.objectId, partition: input.partition, offset: input.offset, correlationId: input.correlationId };
      if (reason === 'superseded') logger.info('session PATCH older than the session held: not applied (newest wins)', fields);
      else logger.error('session PATCH without a session to merge into (PATCH before PUT): not applied; the CPO must PUT the session', fields);
    }
  };
}
