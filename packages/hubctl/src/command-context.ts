import { parseArgs } from 'node:util';
import type { DeliveryStore, DriverToken, ErasureResult, EventLog, PositionBindingStore, QuarantineStore, ReadModelStore, RegistryStore, TokenResendSource } from '@hub/core';
import { OperatorInputError, type OperatorDeps } from '@hub/registry';
import type { PartnerRole, PartyRole } from '@hub/ocpi';
import type { Database } from '@hub/store';
import type { PartnerCheckDeps } from './partner-commands.ts';
import { UsageError } from './usage.ts';

// What every hubctl command group (party-commands.ts, endpoint-commands.ts, routing-commands.ts,
// deliveries-commands.ts, readmodel-commands.ts, quarantine.ts) gets from cli.ts.

export interface HubctlDeps {
  readonly store: RegistryStore;
  /** Read models and the event log, for rebuilds; opened only by the commands that need them. */
  /** `sealsDriverData`: the event log seals drivers' personal fields (HUB_SECRET_KEY given). */
  readonly readModels: () => { store: ReadModelStore; eventLog: EventLog; bindings?: PositionBindingStore; sealsDriverData?: boolean };
  readonly deliveries: () => { deliveries: DeliveryStore; eventLog: EventLog; bindings?: PositionBindingStore };
  readonly quarantine: () => QuarantineStore;
  /** The tokens read model's routed tokens and the delivery queue, for tokens resend. */
  readonly tokens?: () => { source: TokenResendSource; deliveries: DeliveryStore };
  /** Erases a driver's token (hubctl erase token); absent without HUB_SECRET_KEY. */
  readonly erase?: () => (token: DriverToken) => Promise<ErasureResult>;
  /** The registry's Postgres and the event log, for hubctl status's aggregate queries and lag. */
  readonly status: () => { pool: Database; eventLog: EventLog };
  /** The registry's Postgres, the token cipher and the outbound policy, for partner check. */
  readonly partnerCheck?: () => PartnerCheckDeps;
  /** True when stderr is a terminal (progress bars redraw in place). */
  readonly interactive: boolean;
  /** Publishes queued audit events; resolves to false when Kafka could not be reached. */
  readonly publishAudit: () => Promise<boolean>;
  readonly source: string;
  readonly actor: string;
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}


const options = {
  role: { type: 'string' },
  country: { type: 'string' },
  party: { type: 'string' },
  name: { type: 'string' },
  platform: { type: 'string' },
  versions: { type: 'string' },
  module: { type: 'string' },
  url: { type: 'string' },
  emsp: { type: 'string' },
  cpo: { type: 'string' },
  model: { type: 'string' },
  state: { type: 'string' },
  reason: { type: 'string' },
  'older-than': { type: 'string' },
  recipient: { type: 'string' },
  kind: { type: 'string' },
  limit: { type: 'string' },
  id: { type: 'string' },
  uid: { type: 'string' },
  type: { type: 'string' },
  'settle-seconds': { type: 'string' },
  all: { type: 'boolean', default: false },
  topic: { type: 'string' },
  group: { type: 'string' },
  consumer: { type: 'string' },
  'from-time': { type: 'string' },
  'from-offset': { type: 'string' },
  from: { type: 'string' },
  rate: { type: 'string' },
  'dry-run': { type: 'boolean', default: false },
  version: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

export function parseCommandLine(argv: readonly string[]) {
  const parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true, tokens: true });
  // The flags the user wrote (values also holds the defaults of boolean flags).
  const given = new Set(parsed.tokens.flatMap((t) => (t.kind === 'option' ? [t.name] : [])));
  return { values: parsed.values, positionals: parsed.positionals, given };
}

export type OptionValues = ReturnType<typeof parseCommandLine>['values'];

/** One parsed command line, with the helpers every group uses. */
export interface CommandContext {
  readonly deps: HubctlDeps;
  readonly values: OptionValues;
  /** The words of the command line ("partner", "check", "NL/ABC"). */
  readonly positionals: readonly string[];
  readonly op: OperatorDeps;
  /** The human line, or the JSON document with --json. */
  readonly print: (human: string, data: unknown) => void;
  /** Publishes the audit events a change queued; false (with a note on stderr) when Kafka is away. */
  readonly audit: () => Promise<boolean>;
}

/** A command group: runs `action`, resolving to the exit code, or to undefined for an action it does not have. */
export type CommandGroup = (action: string, ctx: CommandContext) => Promise<number | undefined>;

export function need(values: OptionValues, name: keyof OptionValues): string {
  const v = values[name];
  if (typeof v !== 'string' || v.trim() === '') throw new UsageError(`--${name} is required`);
  return v.trim();
}

export function role(values: OptionValues): PartnerRole {
  const r = need(values, 'role').toUpperCase();
  if (r !== 'CPO' && r !== 'EMSP') throw new UsageError('--role must be CPO or EMSP');
  return r;
}

/** The party named by --country, --party and --role. */
export function party(values: OptionValues): PartyRole {
  return { countryCode: need(values, 'country'), partyId: need(values, 'party'), role: role(values) };
}

export { OperatorInputError };
