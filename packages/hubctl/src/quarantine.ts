import type { QuarantinedRecord, QuarantineStore } from '@hub/core';
import type { CommandContext } from './command-context.ts';
import { UsageError } from './usage.ts';

// hubctl quarantine: records a consumer could not apply, listed, re-driven after a
// fix, or discarded. A re-drive is a request the consumer itself carries out (within a second while
// it runs) through its own apply path; hubctl waits for the outcome for a while and reports it.

export interface QuarantineCommand {
  readonly action: 'list' | 'redrive' | 'discard';
  readonly id?: string | undefined;
  readonly group?: string | undefined;
  readonly all: boolean;
  readonly waitMs: number;
}

export interface QuarantineAnswer {
  readonly code: number;
  readonly human: string;
  readonly data: unknown;
}

const json = (r: QuarantinedRecord) => ({
  id: r.id,
  group: r.consumerGroup,
  topic: r.record.topic,
  partition: r.record.partition,
  offset: r.record.offset,
  ce_type: r.ceType,
  ce_id: r.ceId,
  failure: r.failureKind,
  reason: r.reason,
  state: r.state,
  attempts: r.attempts,
  first_seen_at: r.firstSeenAt.toISOString(),
  last_seen_at: r.lastSeenAt.toISOString(),
});

const line = (r: ReturnType<typeof json>) => `#${r.id} ${r.group} ${r.topic}[${r.partition}]@${r.offset} ${r.ce_type ?? '(undecodable)'} ${r.state} attempts=${r.attempts} ${r.reason}`;

export async function runQuarantineCommand(store: QuarantineStore, command: QuarantineCommand): Promise<QuarantineAnswer> {
  if (command.action === 'list') {
    const rows = (await store.list({ ...(command.group ? { consumerGroup: command.group } : {}), ...(command.all ? {} : { states: ['quarantined', 'redrive'] }) })).map(json);
    return { code: 0, human: rows.length === 0 ? 'no quarantined records' : rows.map(line).join('\n'), data: rows };
  }
  if (command.action === 'discard') {
    if (!command.id) return { code: 2, human: 'discard needs --id N', data: { error: 'discard needs --id N' } };
    const done = await store.discard(command.id);
    return done ? { code: 0, human: `#${command.id} discarded`, data: { discarded: command.id } } : { code: 1, human: `#${command.id} is not quarantined`, data: { error: 'not quarantined' } };
  }
  if (!command.id && !command.all && !command.group) return { code: 2, human: 'name what to re-drive: --id N, --group G or --all', data: { error: 'nothing named' } };
  const ids = await store.requestRedrive(command.id ? { id: command.id } : command.group ? { consumerGroup: command.group } : {});
  // Wait for the consumers to carry the requests out (they poll every second).
  const deadline = Date.now() + command.waitMs;
  let rows: QuarantinedRecord[] = [];
  for (;;) {
    rows = (await Promise.all(ids.map((id) => store.get(id)))).filter((r): r is QuarantinedRecord => r !== undefined);
    if (rows.every((r) => r.state !== 'redrive') || Date.now() >= deadline) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const out = rows.map(json);
  const waiting = out.filter((r) => r.state === 'redrive').length;
  const failed = out.filter((r) => r.state === 'quarantined').length;
  const human = [
    `${ids.length} record(s) asked to be re-driven`,
    ...out.map(line),
    ...(waiting > 0 ? [`${waiting} not yet applied: their consumer applies them once it runs`] : []),
  ].join('\n');
  return { code: failed > 0 ? 1 : 0, human, data: out };
}

/** hubctl quarantine list|redrive|discard. */
export async function runQuarantineGroup(action: string, ctx: CommandContext): Promise<number | undefined> {
  const { deps, values, print } = ctx;
  switch (action) {
    case 'list':
    case 'redrive':
    case 'discard': {
      if (values.id !== undefined && !/^\d+$/.test(values.id)) throw new UsageError('--id must be a record number');
      const answer = await runQuarantineCommand(deps.quarantine(), { action, id: values.id, group: values.group, all: values.all, waitMs: 30_000 });
      if (answer.code === 2) throw new UsageError(answer.human);
      print(answer.human, answer.data);
      return answer.code;
    }
    default:
      return undefined;
  }
}
