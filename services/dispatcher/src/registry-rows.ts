import { type PartyRole } from '@hub/ocpi';
import { DependencyUnavailable, type DeliveryInput, type ReadModelStore, type ClientInfoRecipients, type TokenResendSource } from '@hub/core';
import type { Counter } from '@hub/observability';
import { deliveryRuleOf, topicOf } from '@hub/modules';
import { projectionWait, type ServiceShell } from '@hub/service-kit';
import { tokenResendRows } from '@hub/store';
import type { Consumed } from './registry-consumer.ts';

// The delivery rows of a registry event (registry-consumer.ts): ClientInfo pushes and token re-sends.

/** The ClientInfo rows of one event. */
export function clientInfoRowMaker(clientInfo: ClientInfoRecipients, skipped: Counter<'reason'>, logger: ServiceShell['logger']) {
  const rule = deliveryRuleOf('client_info');
  return async (c: Consumed): Promise<DeliveryInput[]> => {
    const change = c.plan?.clientInfo;
    const event = c.event;
    if (!change || !event) return [];
    const rows: DeliveryInput[] = [];
    const of = change.of;
    // A rule enabled: the eMSP's ClientInfo to the CPO and the CPO's to the eMSP, no one else.
    const subjects = 'pair' in of ? [...(await clientInfo.subjects({ party: { ...of.pair.emsp, role: 'EMSP' } })), ...(await clientInfo.subjects({ party: { ...of.pair.cpo, role: 'CPO' } }))] : await clientInfo.subjects(of);
    const other = (subject: PartyRole) => ('pair' in of ? (subject.role === 'EMSP' ? { ...of.pair.cpo, role: 'CPO' } : { ...of.pair.emsp, role: 'EMSP' }) : undefined);
    for (const subject of subjects) {
      const info = { party_id: subject.partyId, country_code: subject.countryCode, role: subject.role, status: change.status(subject), last_updated: event.time };
      const only = other(subject);
      for (const to of await clientInfo.recipients(subject, rule.receiverModule)) {
        if (only && !(to.countryCode === only.countryCode.toUpperCase() && to.partyId === only.partyId.toUpperCase() && to.role === only.role)) continue;
        if (!to.hasReceiver) {
          skipped.inc({ reason: 'no_receiver' });
          logger.info('ClientInfo not pushed: the party lists no hubclientinfo receiver', { party: `${to.countryCode}/${to.partyId}/${to.role}`, about: `${subject.countryCode}/${subject.partyId}/${subject.role}`, status: info.status });
          continue;
        }
        // A row names an eMSP-CPO pair; the recipient is the side that is not the subject.
        const pair = subject.role === 'CPO' ? { emsp: to, cpo: subject, recipientRole: 'EMSP' as const } : { emsp: subject, cpo: to, recipientRole: 'CPO' as const };
        rows.push({
          kind: 'client_info',
          emsp: { countryCode: pair.emsp.countryCode, partyId: pair.emsp.partyId },
          cpo: { countryCode: pair.cpo.countryCode, partyId: pair.cpo.partyId },
          recipientRole: pair.recipientRole,
          objectId: `${subject.countryCode}/${subject.partyId}/${subject.role}`,
          partition: c.raw.partition,
          offset: c.raw.offset,
          payload: info,
          correlationId: event.correlationId ?? event.id,
          eventTime: event.time,
        });
      }
    }
    return rows;
  };
}

/** The token rows of one event, handed to `emit` a page at a time. */
export function tokenRowMaker(
  shell: Pick<ServiceShell, 'eventLog' | 'logger'>,
  deps: { tokens: TokenResendSource; tokenProjection: Pick<ReadModelStore, 'positions'> },
  resent: Counter,
) {
  const { eventLog, logger } = shell;
  // A token pushed just before the rule was enabled was fanned out without this CPO; the re-send must
  // see it, so it waits (briefly, well inside the consumer's session timeout) for the projector to pass
  // the tokens topic's current end.
  const tokensProjected = projectionWait(eventLog, deps.tokenProjection, topicOf, 5_000, 100);
  return async (c: Consumed, emit: (rows: DeliveryInput[]) => Promise<void>): Promise<void> => {
    const scope = c.plan?.tokens;
    const event = c.event;
    if (!scope || !event) return;
    if (!(await tokensProjected.caughtUp('tokens'))) {
      // Re-sending from a read model known to be behind would skip those tokens for good: the partition
      // waits instead (consumerWatch backs off and retries; nothing is stored before the rows are).
      throw new DependencyUnavailable('postgres', 'the tokens read model is behind the tokens topic: the re-send waits for the projector');
    }
    for (const r of await tokenResendRows(deps.tokens, scope, { correlationId: event.correlationId ?? event.id, eventTime: event.time }, emit)) {
      resent.inc(r.rows);
      logger.info('tokens re-sent to CPOs newly routed to the eMSP', { emsp: `${r.emsp.countryCode}/${r.emsp.partyId}`, cpos: r.cpos.map((p) => `${p.countryCode}/${p.partyId}`), rows: r.rows });
    }
  };
}
