import { partyKey } from '@hub/ocpi';
import { isReplayedToEmspModule, ocpiModules, replayedToEmspModules } from '@hub/modules';
import { need, type CommandContext } from './command-context.ts';
import { deliveryFilter, partyRef } from './delivery-filter.ts';
import { progressBar } from './rebuild.ts';
import { replayToEmsp } from './replay.ts';
import { UsageError } from './usage.ts';

// hubctl deliveries: list, re-drive and replay delivery records (README, Deliveries).

// Long because: one case per `hubctl deliveries` subcommand, each a few lines of options and output.
export async function runDeliveriesCommand(action: string, ctx: CommandContext): Promise<number | undefined> {
  const { deps, values, print } = ctx;
  switch (action) {
    case 'list':
    case 'redrive': {
      const filter = deliveryFilter(values);
      const { deliveries } = deps.deliveries();
      if (action === 'redrive') {
        const narrowed = filter.id || filter.emsp || filter.cpo || filter.recipient || filter.reason || filter.olderThanSeconds !== undefined;
        if (!narrowed && !values.all) throw new UsageError('name what to re-drive (--id, --emsp, --cpo, --recipient, --reason, --older-than) or pass --all');
        // A pending record may be in flight: re-driving it could send it twice at once.
        if (filter.states?.some((s) => s !== 'dead' && s !== 'unroutable')) throw new UsageError('only dead or unroutable records are re-driven (pending ones are delivered already)');
        const count = await deliveries.redrive(filter);
        print(`${count} record(s) pending again; the dispatcher delivers them now`, { redriven: count });
        return 0;
      }
      const rows = await deliveries.list({ ...filter, states: filter.states ?? ['pending', 'dead', 'unroutable'] });
      const json = rows.map((d) => ({
        id: d.id,
        kind: d.kind,
        emsp: `${d.emsp.countryCode}/${d.emsp.partyId}`,
        cpo: `${d.cpo.countryCode}/${d.cpo.partyId}`,
        // Who receives it: the eMSP, or the CPO of a token (migration 018).
        recipient_role: d.recipientRole,
        object_id: d.objectId,
        state: d.state,
        reason: d.reason ?? null,
        attempts: d.attempts,
        last_error: d.lastError ?? null,
        next_attempt_at: d.nextAttemptAt.toISOString(),
        created_at: d.createdAt.toISOString(),
      }));
      print(
        json.length === 0
          ? 'no records'
          : json.map((r) => `#${r.id} ${r.kind} ${r.recipient_role === 'CPO' ? `${r.emsp} -> ${r.cpo}` : `${r.cpo} -> ${r.emsp}`} ${r.object_id} ${r.state} attempts=${r.attempts} ${r.reason ?? r.last_error ?? ''}`).join('\n'),
        json,
      );
      return 0;
    }
    case 'replay': {
      const topic = need(values, 'topic');
      if (!isReplayedToEmspModule(topic)) throw new UsageError(`--topic must be ${replayedToEmspModules.join(' or ')}`);
      const emsp = partyRef(need(values, 'emsp'), 'emsp');
      const fromTime = values['from-time'] ? new Date(values['from-time']) : undefined;
      if (fromTime && Number.isNaN(fromTime.getTime())) throw new UsageError('--from-time must be an ISO 8601 date-time');
      const fromOffsetText = values['from-offset'];
      if (!fromTime && fromOffsetText === undefined) throw new UsageError('give --from-time or --from-offset');
      if (fromOffsetText !== undefined && !/^\d+$/.test(fromOffsetText)) throw new UsageError('--from-offset must be a non-negative integer');
      const rate = values.rate === undefined ? 0 : Number(values.rate);
      if (!Number.isFinite(rate) || rate < 0) throw new UsageError('--rate must be a number of records per second');
      let lastLine = 0;
      const result = await replayToEmsp(
        { ...deps.deliveries(), quarantine: deps.quarantine() },
        {
          kind: ocpiModules[topic].delivery.kind,
          emsp,
          ...(fromTime ? { fromTime } : {}),
          ...(fromOffsetText !== undefined ? { fromOffset: BigInt(fromOffsetText) } : {}),
          ratePerSecond: rate,
          dryRun: values['dry-run'],
        },
        (p) => {
          const line = progressBar({ applied: BigInt(p.scanned), target: BigInt(p.total), eventsPerSecond: 0 }).replace(/, 0 ev\/s$/, `, ${p.matched} for ${partyKey(emsp)}`);
          if (deps.interactive) deps.err(`\r${line}`);
          else if (Date.now() - lastLine > 1000) {
            lastLine = Date.now();
            deps.err(`${line}\n`);
          }
        },
      );
      if (deps.interactive) deps.err('\n');
      print(
        values['dry-run']
          ? `dry run: ${result.matched} of ${result.scanned} ${topic} records are for ${partyKey(emsp)}; nothing enqueued`
          : `${result.enqueued} ${topic} records for ${partyKey(emsp)} enqueued for delivery (${result.scanned} scanned)`,
        { scanned: result.scanned, matched: result.matched, enqueued: result.enqueued, dry_run: values['dry-run'] },
      );
      return 0;
    }
    default:
      return undefined;
  }
}
