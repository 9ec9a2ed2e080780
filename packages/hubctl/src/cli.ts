import type { OperatorDeps } from '@hub/registry';
import { OperatorInputError, parseCommandLine, type CommandGroup, type HubctlDeps } from './command-context.ts';
import { runDeliveriesCommand } from './deliveries-commands.ts';
import { runEndpointCommand } from './endpoint-commands.ts';
import { runEraseCommand } from './erase-commands.ts';
import { runPartnerCommand } from './partner-commands.ts';
import { runPartyCommand } from './party-commands.ts';
import { runPositionsCommand } from './positions-commands.ts';
import { runQuarantineGroup } from './quarantine.ts';
import { runReadmodelCommand } from './readmodel-commands.ts';
import { runRoutingCommand } from './routing-commands.ts';
import { runStatusCommand } from './status.ts';
import { runTokensCommand } from './tokens-commands.ts';
import { COMMAND_FLAGS, USAGE, UsageError } from './usage.ts';

// hubctl: the account team's tool (interface document, What the service does 5; Onboarding (a), (c),
// (d)). Every command prints a human-readable answer, or one JSON document with --json. This file
// parses the command line and hands it to its group's file.

export { USAGE };
export type { HubctlDeps };

/** The command groups, by the first word of the command line. */
const GROUPS: Readonly<Record<string, CommandGroup>> = {
  party: runPartyCommand,
  partner: runPartnerCommand,
  endpoint: runEndpointCommand,
  routing: runRoutingCommand,
  deliveries: runDeliveriesCommand,
  readmodel: runReadmodelCommand,
  quarantine: runQuarantineGroup,
  positions: runPositionsCommand,
  status: runStatusCommand,
  tokens: runTokensCommand,
  erase: runEraseCommand,
};

/** Runs one hubctl command; resolves to the process exit code. */
export async function runHubctl(argv: readonly string[], deps: HubctlDeps): Promise<number> {
  let parsed;
  try {
    parsed = parseCommandLine(argv);
  } catch (e) {
    deps.err(`${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals, given } = parsed;
  const json = values.json;
  const op: OperatorDeps = { store: deps.store, source: deps.source, actor: deps.actor };
  const print = (human: string, data: unknown) => deps.out(json ? `${JSON.stringify(data, null, 2)}\n` : `${human}\n`);
  const audit = async () => {
    const published = await deps.publishAudit();
    if (!published) deps.err('note: change saved; its audit event is queued and will reach the registry topic once Kafka is reachable\n');
    return published;
  };
  const [group, action] = positionals;

  try {
    if (values.help || !group) {
      deps.out(USAGE);
      return group || values.help ? 0 : 2;
    }
    const run = Object.hasOwn(GROUPS, group) ? GROUPS[group] : undefined;
    if (!run) throw new UsageError(`unknown command "${positionals.join(' ')}"`);
    const command = action ? `${group} ${action}` : group;
    const takes = COMMAND_FLAGS.get(command) ?? COMMAND_FLAGS.get(group);
    const foreign = takes ? [...given].filter((f) => !takes.has(f)) : [];
    if (foreign.length > 0) throw new UsageError(`${command} does not take ${foreign.map((f) => `--${f}`).join(', ')}`);
    const code = await run(action ?? '', { deps, values, positionals, op, print, audit });
    if (code === undefined) throw new UsageError(`unknown command "${positionals.join(' ')}"`);
    return code;
  } catch (e) {
    if (e instanceof UsageError) {
      deps.err(`${e.message}\n\n${USAGE}`);
      return 2;
    }
    if (e instanceof OperatorInputError || (e instanceof Error && /already registered|no platform/.test(e.message))) {
      deps.err(json ? `${JSON.stringify({ error: e.message })}\n` : `error: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}
