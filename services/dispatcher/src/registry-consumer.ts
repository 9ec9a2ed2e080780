import { failureKindOf, decodeRecord, RecordRejected, type ConsumedRecord, type DeliveryInput, type DeliveryPosition, type DeliveryStore, type QuarantineEntry, type RawRecord, type ReadModelStore, type ClientInfoRecipients, type TokenResendSource } from '@hub/core';
import { topics, type HubEvent } from '@hub/events';
import { Counter, type Gauge } from '@hub/observability';
import { consumerWatch, type Item, type ServiceShell } from '@hub/service-kit';
import { postgresQuarantineStore } from '@hub/store';
import type { DispatcherConfig } from './config.ts';
import { subscribeRows } from './row-subscription.ts';
import { clientInfoRowMaker, tokenRowMaker } from './registry-rows.ts';
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

export type Consumed = { readonly raw: RawRecord; readonly event?: HubEvent; readonly plan?: RegistryPlan };

/** Rows enqueued ahead of the last statement (which carries the position) for a large token re-send. */
const ROWS_PER_STATEMENT = 2_000;

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
  const skipped = new Counter({ name: 'hub_client_info_skipped_total', help: 'ClientInfo pushes not made: the routed, connected party lists no hubclientinfo receiver', labelNames: ['reason'], registers: [metrics] });
  const resent = new Counter({ name: 'hub_tokens_resent_total', help: 'Token rows made for CPOs newly routed to an eMSP (a rule enabled, a party reinstated)', registers: [metrics] });
  const watch = consumerWatch({ group, metrics, logger, quarantine: postgresQuarantineStore(pool), stuckAfterMs: config.consumerStuckAfterMs });
  shell.addHealthProblems(() => watch.problems());

  const decode = (raw: RawRecord, event: HubEvent | undefined): Consumed => {
    const plan = event ? registryPlanOf(event) : undefined;
    return { raw, ...(event ? { event } : {}), ...(plan ? { plan } : {}) };
  };

  const clientInfoRows = clientInfoRowMaker(deps.clientInfo, skipped, logger);
  const tokenRows = tokenRowMaker(shell, deps, resent);

  const apply = chunkApplier(deliveries, group, clientInfoRows, tokenRows);

  watch.startRedrives(async (q) => {
    const consumed = decode(q.record, decodeRecord(q.record));
    if (!consumed.plan) throw new RecordRejected('undecodable', 'not a registry event of the hub with the payload its type promises');
    await apply([{ record: consumed }]);
    wake();
    return 'redriven';
  }, failureKindOf);

  // A first start (no stored position: a new hub, or an upgrade that adds this consumer) begins at the
  // registry's current end. Its history holds every past registration, health change and rule: read
  // from the start it would push a storm of stale ClientInfo and re-send every eMSP's tokens.
  await startAtRegistryEndIfNew(eventLog, deliveries, group);
  return subscribeRows(shell, {
    group,
    topics: [topics.registry],
    deliveries,
    watch,
    lag,
    decode: (record: ConsumedRecord) => {
      const consumed = decode(record, record.event);
      return consumed.plan ? { record: consumed } : { record: consumed, quarantine: { failure: 'undecodable', reason: 'not a registry event of the hub with the payload its type promises (CloudEvents binary mode, JSON object data)' } };
    },
    apply,
    quarantinedMessage: 'registry record quarantined: it cannot become delivery rows',
    wake,
  });
}

/** Makes and enqueues the rows of the chunk's records; the last statement carries the position and the quarantined ones. */
function chunkApplier(
  deliveries: DeliveryStore,
  group: string,
  clientInfoRows: (c: Consumed) => Promise<DeliveryInput[]>,
  tokenRows: (c: Consumed, emit: (rows: DeliveryInput[]) => Promise<void>) => Promise<void>,
) {
  return async (chunk: ReadonlyArray<Item<Consumed>>, position?: DeliveryPosition): Promise<void> => {
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
}

/** Stores the registry's current end as the group's position when it has none (see the caller). */
async function startAtRegistryEndIfNew(eventLog: ServiceShell['eventLog'], deliveries: DeliveryStore, group: string): Promise<void> {
  const registryTopic = eventLog.physical(topics.registry);
  if ((await deliveries.deliveryPositions(group, registryTopic)).size === 0) {
    const ranges = await eventLog.offsetRanges(topics.registry);
    await deliveries.resetDeliveryPositions(group, registryTopic, [...ranges.keys()], new Map([...ranges].map(([partition, r]) => [partition, r.high])));
  }
}
