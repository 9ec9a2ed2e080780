import { topics } from '@hub/events';
import { consumedDeliveryModules, projectedModules, topicOf } from '@hub/modules';
import { need, type CommandContext } from './command-context.ts';
import { progressBar, rebuildReadModel } from './rebuild.ts';
import { UsageError } from './usage.ts';

// hubctl positions reset: the fix a consumer names when it refuses to run because
// its stored positions belong to another Kafka cluster or to a topic deleted and created again. The
// state those positions stand for is rebuilt from the topics as they are now, and the positions are
// bound to them:
// - projector: every read model is rebuilt from its topic (readmodel rebuild) and replaces the live
//   one without waiting for it to catch up (its positions say nothing about these topics);
// - dispatcher: its positions go back to the start of every partition, so it reads the sessions and
//   CDRs topics again and makes their delivery rows (newest wins: a session already delivered in the
//   same state, or a CDR already received, is not delivered again); the registry topic as well
//   (ClientInfo and re-sent tokens: the same versions are not sent again either).

export async function runPositionsCommand(action: string, ctx: CommandContext): Promise<number | undefined> {
  const { deps, values, print } = ctx;
  if (action !== 'reset') return undefined;
  const consumer = need(values, 'consumer');
  if (consumer === 'projector') {
    const readModels = deps.readModels();
    if (!readModels.bindings) throw new Error('hubctl was started without the position bindings store');
    const results = [];
    for (const model of projectedModules) {
      const result = await rebuildReadModel(readModels, model, (p) => deps.interactive && deps.err(`\r${progressBar(p)}`), { reset: true, quarantineGroup: values.group ?? 'projector' });
      if (deps.interactive) deps.err('\n');
      results.push({ model, generation: result.generation, events: Number(result.events), rows: result.rows });
    }
    print(results.map((r) => `${r.model} rebuilt from the current topic as generation ${r.generation}: ${r.events} events, ${r.rows} rows; positions bound`).join('\n'), results);
    return 0;
  }
  if (consumer === 'dispatcher') {
    const group = values.group ?? 'dispatcher';
    const { deliveries, eventLog, bindings } = deps.deliveries();
    if (!bindings) throw new Error('hubctl was started without the position bindings store');
    const reset = [];
    // Its two consumer groups: the OCPI topics' deliveries, and the registry topic's (ClientInfo,
    // token re-sends; services/dispatcher/src/registry-consumer.ts).
    // The registry group starts at the topic's end: replaying the registry's history would push every
    // past ClientInfo and re-send every eMSP's tokens again; the token topic read from its start
    // reaches every routed CPO anyway.
    const reads = [...consumedDeliveryModules.map((m) => ({ group, topic: topicOf(m), fromEnd: false })), { group: `${group}.registry`, topic: topics.registry, fromEnd: true }];
    for (const { group: g, topic, fromEnd } of reads) {
      const ranges = await eventLog.offsetRanges(topic);
      await deliveries.resetDeliveryPositions(g, eventLog.physical(topic), [...ranges.keys()], fromEnd ? new Map([...ranges].map(([p, r]) => [p, r.high])) : undefined);
      await eventLog.verifyPositions(
        [topic],
        { load: (t) => deliveries.deliveryPositions(g, t), loadBinding: (t) => bindings.load(g, t), saveBinding: (t, b) => bindings.save(g, t, b) },
        { rebind: true },
      );
      reset.push({ group: g, topic: eventLog.physical(topic), partitions: ranges.size });
    }
    print(reset.map((r) => `${r.group}: ${r.topic} (${r.partitions} partitions) will be read ${r.group.endsWith('.registry') ? 'from its current end' : 'again from its start'}; positions bound`).join('\n'), { group, topics: reset });
    return 0;
  }
  throw new UsageError('--consumer must be projector or dispatcher');
}
