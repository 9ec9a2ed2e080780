import { decodeRecord, type ConsumedRecord } from '@hub/event-log';
import { topics, type HubEvent } from '@hub/events';
import { DependencyUnavailable, type PartyRole } from '@hub/ocpi';
import { Counter, type Gauge } from '@hub/observability';
import { deliveryRuleOf, topicOf } from '@hub/modules';
import { consumerWatch, projectionWait, rawRecord, type Item, type ServiceShell } from '@hub/service-kit';
import {
  postgresFailureKind,
  postgresQuarantineStore,
  type ClientInfoRecipients,
  type DeliveryInput,
  type DeliveryPosition,
  type DeliveryStore,
  type QuarantineEntry,
  type RawRecord,
  type ReadModelStore,
  type TokenResendSource,
  tokenResendRows,
} from '@hub/store';
import type { DispatcherConfig } from './config.ts';
import { subscribeRows } from './row-subscription.ts';
import { registryPlanOf, type RegistryPlan } from './registry-plan.ts';

// The dispatcher's registry consumer: its own consumer group over hub.registry.v1 that
// turns registry changes into delivery rows, the position stored with them (deliveries.enqueue), so a
// crash neither loses nor applies twice (rows are newest-wins: the same event again is a no-op).
// - ClientInfo push (mod_hub_client_info.asciidoc, Push model): a party registered, suspended,
//   reinstated, or its platform's health or credentials changed -> one client_info row per connected
//   party routed to it that lists a hubclientinfo receiver; a rule enabled -> each party's ClientInfo
//   to the other. One that lists none is skipped: counted
//   (hub_client_info_skipped_total) and logged, not an error.
// - Token re-send (item 1): a routing rule enabled, or a party reinstated -> the eMSP's current tokens
//   (tokens read model) as token rows for each CPO now actively routed to it. Their offset is -1, so
//   a row the CPO already holds of the same version (same last_updated) is kept, not sent again.

type Consumed = { readonly raw: RawRecord; readonly event?: HubEvent; readonly plan?: RegistryPlan };

/** Rows enqueued ahead of the last statement (which carries the position) for a large token re-send. */
const ROWS_PER_STATEMENT = 2_000;

// Long because: the registry consumer's row makers (ClientInfo, token re-sends), its apply step and
// its subscription share the service's metrics, watch and deliveries; each closure is short.
export async function startRegistryConsumer(
  config: DispatcherConfig,
  shell: ServiceShell,
  deps: {
    deliveries: DeliveryStore;
    clientInfo: ClientInfoRecipients;
    tokens: TokenResendSource;
    /** Where the projector stands in the tokens topic (the read model the re-send reads). */
    tokenProjection: Pick<ReadModelStore, 'positions'>;
    lag: Gauge<'group' | 'topic' | 'partition'>;
    wake: () => void;
  },
): Promise<{ stop(): Promise<void> }> {
  const { logger, metrics, eventLog, pool } = shell;
  const { deliveries, lag, wake } = deps;
  const group = `${config.groupId}.registry`;
  const rule = deliveryRuleOf('client_info');
  const skipped = new Counter({ name: 'hub_client_info_skipped_total', help: 'ClientInfo pushes not made: the routed, connected party lists no hubclientinfo receiver', labelNames: ['reason'], registers: [metrics] });
  const resent = new Counter({ name: 'hub_tokens_resent_total', help: 'Token rows made for CPOs newly routed to an eMSP (a rule enabled, a party reinstated)', registers: [metrics] });
  const watch = consumerWatch({ group, metrics, logger, quarantine: postgresQuarantineStore(pool), stuckAfterMs: config.consumerStuckAfterMs });
  shell.addHealthProblems(() => watch.problems());

  const decode = (raw: RawRecord, event: HubEvent | undefined): Consumed => {
    const plan = event ? registryPlanOf(event) : undefined;
    return { raw, ...(event ? { event } : {}), ...(plan ? { plan } : {}) };
  };

  /** The ClientInfo rows of one event. */
  const clientInfoRows = async (c: Consumed): Promise<DeliveryInput[]> => {
    const change = c.plan?.clientInfo;
    const event = c.event;
    if (!change || !event) return [];
    const rows: DeliveryInput[] = [];
    const of = change.of;
    // A rule enabled: the eMSP's ClientInfo to the CPO and the CPO's to the eMSP, no one else.
    const subjects = 'pair' in of ? [...(await deps.clientInfo.subjects({ party: { ...of.pair.emsp, role: 'EMSP' } })), ...(await deps.clientInfo.subjects({ party: { ...of.pair.cpo, role: 'CPO' } }))] : await deps.clientInfo.subjects(of);
    const other = (subject: PartyRole) => ('pair' in of ? (subject.role === 'EMSP' ? { ...of.pair.cpo, role: 'CPO' } : { ...of.pair.emsp, role: 'EMSP' }) : undefined);
    for (const subject of subjects) {
      const info = { party_id: subject.partyId, country_code: subject.countryCode, role: subject.role, status: change.status(subject), last_updated: event.time };
      const only = other(subject);
      for (const to of await deps.clientInfo.recipients(subject, rule.receiverModule)) {
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

  // A token pushed just before the rule was enabled was fanned out without this CPO; the re-send must
  // see it, so it waits (briefly, well inside the consumer's session timeout) for the projector to pass
  // the tokens topic's current end.
  const tokensProjected = projectionWait(eventLog, deps.tokenProjection, topicOf, 5_000, 100);

  /** The token rows of one event, handed to `emit` a page at a time. */
  const tokenRows = async (c: Consumed, emit: (rows: DeliveryInput[]) => Promise<void>): Promise<void> => {
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

  /** Makes and enqueues the rows of the chunk's records; the last statement carries the position and the quarantined ones. */
  const apply = async (chunk: ReadonlyArray<Item<Consumed>>, position?: DeliveryPosition): Promise<void> => {
    let pending: DeliveryInput[] = [];
    const flush = async () => {
      if (pending.length >= ROWS_PER_STATEMENT) {
        await deliveries.enqueue(pending);
        pending = [];
      }
    };
    for (const i of chunk) {
      if (i.quarantine) continue;
      // Row by row, not push(...rows): a re-send page for many CPOs can exceed the arguments a call takes.
      for (const row of await clientInfoRows(i.record)) pending.push(row);
      await tokenRows(i.record, async (rows) => {
        for (const row of rows) pending.push(row);
        await flush();
      });
      await flush();
    }
    const quarantine: QuarantineEntry[] = chunk.flatMap((i) => (i.quarantine ? [{ consumerGroup: group, record: i.record.raw, ceType: i.record.event?.type, ceId: i.record.event?.id, failureKind: i.quarantine.failure, reason: i.quarantine.reason }] : []));
    await deliveries.enqueue(pending, position, quarantine);
  };

  watch.startRedrives(async (q) => {
    const consumed = decode(q.record, decodeRecord(q.record));
    if (!consumed.plan) throw Object.assign(new Error('not a registry event of the hub with the payload its type promises'), { code: '22000' });
    await apply([{ record: consumed }]);
    wake();
    return 'redriven';
  }, postgresFailureKind);

  // A first start (no stored position: a new hub, or an upgrade that adds this consumer) begins at the
  // registry's current end. Its history holds every past registration, health change and rule: read
  // from the start it would push a storm of stale ClientInfo and re-send every eMSP's tokens.
  const registryTopic = eventLog.physical(topics.registry);
  if ((await deliveries.deliveryPositions(group, registryTopic)).size === 0) {
    const ranges = await eventLog.offsetRanges(topics.registry);
    await deliveries.resetDeliveryPositions(group, registryTopic, [...ranges.keys()], new Map([...ranges].map(([partition, r]) => [partition, r.high])));
  }
  return subscribeRows(shell, {
    group,
    topics: [topics.registry],
    deliveries,
    watch,
    lag,
    decode: (record: ConsumedRecord) => {
      const consumed = decode(rawRecord(record), record.event);
      return consumed.plan ? { record: consumed } : { record: consumed, quarantine: { failure: 'undecodable', reason: 'not a registry event of the hub with the payload its type promises (CloudEvents binary mode, JSON object data)' } };
    },
    apply,
    quarantinedMessage: 'registry record quarantined: it cannot become delivery rows',
    wake,
  });
}
