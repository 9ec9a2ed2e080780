import { isProjectedModule, personalDataOf, projectedModules } from '@hub/modules';
import { need, type CommandContext } from './command-context.ts';
import { fillSnapshot } from '@hub/service-kit';
import { progressBar, rebuildReadModel } from './rebuild.ts';
import { UsageError } from './usage.ts';

// hubctl readmodel: rebuild a read model into a new generation from its snapshot topic and the change
// topic's tail after it (docs/decisions/0014-snapshot-topics.md), then switch over; list
// the events it did not apply (not applicable, or superseded: docs/decisions/0001-newest-state-wins.md).

// Long because: one case per `hubctl readmodel` subcommand, each a few lines of options and output.
export async function runReadmodelCommand(action: string, ctx: CommandContext): Promise<number | undefined> {
  const { deps, values, print } = ctx;
  switch (action) {
    case 'rebuild': {
      const model = need(values, 'model');
      if (!isProjectedModule(model)) throw new UsageError(`--model must be ${projectedModules.join(' or ')}`);
      const from = values.from ?? 'snapshot';
      if (from !== 'snapshot' && from !== 'history') throw new UsageError('--from must be snapshot or history');
      let lastLine = 0;
      const result = await rebuildReadModel(deps.readModels(), model, (p) => {
        if (deps.interactive) deps.err(`\r${progressBar(p)}`);
        else if (Date.now() - lastLine > 1000) {
          lastLine = Date.now();
          deps.err(`${progressBar(p)}\n`);
        }
      }, { from });
      if (deps.interactive) deps.err('\n');
      print(
        `${model} rebuilt as generation ${result.generation}: ${result.snapshotRecords} snapshot records, then up to ${result.events} events, ${result.rows} rows in ${result.seconds.toFixed(1)} s; now serving`,
        { model, generation: result.generation, events: Number(result.events), rows: result.rows, seconds: result.seconds, events_per_second: result.eventsPerSecond, snapshot_records: result.snapshotRecords, snapshot_seconds: result.snapshotSeconds },
      );
      return 0;
    }
    case 'snapshot': {
      const model = need(values, 'model');
      if (!isProjectedModule(model)) throw new UsageError(`--model must be ${projectedModules.join(' or ')}`);
      const readModels = deps.readModels();
      // Without the key a model's personal data (tokens' uids) would reach the topic in plain (ADR 0013).
      if (personalDataOf(model) && !readModels.sealsDriverData) throw new UsageError(`readmodel snapshot --model ${model} needs HUB_SECRET_KEY, to seal drivers' personal fields`);
      let lastLine = 0;
      const result = await fillSnapshot(readModels, model, {
        source: deps.source,
        onProgress: (objects) => {
          if (Date.now() - lastLine < 1000) return;
          lastLine = Date.now();
          deps.err(deps.interactive ? `\r${objects} objects written` : `${objects} objects written\n`);
        },
      });
      if (deps.interactive && lastLine > 0) deps.err('\n');
      print(
        `${result.objects} ${model} written to the snapshot topic in ${result.seconds.toFixed(1)} s` + (result.skipped > 0 ? ` (${result.skipped} erased tokens left out)` : ''),
        { model, objects: result.objects, skipped_erased: result.skipped, seconds: result.seconds },
      );
      return 0;
    }
    case 'rejects': {
      const model = need(values, 'model');
      if (!isProjectedModule(model)) throw new UsageError(`--model must be ${projectedModules.join(' or ')}`);
      const limit = values.limit === undefined ? 50 : Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new UsageError('--limit must be a whole number from 1 to 10000');
      const rejects = await deps.readModels().store.rejects(model, limit);
      print(
        rejects.length === 0 ? `no events of ${model} left unapplied` : rejects.map((r) => `${r.at.toISOString()} ${r.type} ${r.subject} [${r.partition}]@${r.offset}: ${r.reason}`).join('\n'),
        rejects.map((r) => ({ at: r.at.toISOString(), partition: r.partition, offset: r.offset, subject: r.subject, event_type: r.type, reason: r.reason })),
      );
      return 0;
    }
    default:
      return undefined;
  }
}
