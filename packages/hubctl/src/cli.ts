import { parseArgs } from 'node:util';
import type { EventLog } from '@hub/event-log';
import type { DeliveryFilter, DeliveryState, DeliveryStore, QuarantineStore, ReadModelStore } from '@hub/store';
import { runQuarantineCommand } from './quarantine.ts';
import { replayToEmsp } from './replay.ts';
import { progressBar, rebuildReadModel } from './rebuild.ts';
import { partyKey, type PartnerRole, type PartyRef } from '@hub/ocpi';
import {
  OperatorInputError,
  overrideEndpoint,
  registerParty,
  reissueInitialToken,
  setRoutingRule,
  setSuspended,
  type OperatorDeps,
  type RegistryStore,
} from '@hub/registry';

// hubctl: the account team's tool (interface document, What the service does 5; Onboarding (a), (c),
// (d)). Every command prints a human-readable answer, or one JSON document with --json.

export interface HubctlDeps {
  readonly store: RegistryStore;
  /** Read models and the event log, for rebuilds; opened only by the commands that need them. */
  readonly readModels: () => { store: ReadModelStore; eventLog: EventLog };
  readonly deliveries: () => { deliveries: DeliveryStore; eventLog: EventLog };
  readonly quarantine: () => QuarantineStore;
  /** True when stderr is a terminal (progress bars redraw in place). */
  readonly interactive: boolean;
  /** Publishes queued audit events; resolves to false when Kafka could not be reached. */
  readonly publishAudit: () => Promise<boolean>;
  readonly source: string;
  readonly actor: string;
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

export const USAGE = `usage: npm run hubctl -- <command> [options] [--json]

  party register --role CPO|EMSP --country CC --party PID --name NAME [--platform ID]
                                   register a party and print its initial token
                                   (--platform adds the role to an existing platform)
  party list [--role CPO|EMSP]     parties with role, status and last probe
  party show --country CC --party PID --role ROLE
  party token --country CC --party PID --role ROLE
                                   issue a new initial token (before registration only)
  party suspend|reinstate --country CC --party PID --role ROLE
  endpoint set --country CC --party PID --role ROLE --module sessions|cdrs|tokens|commands --url URL
  endpoint clear --country CC --party PID --role ROLE --module MODULE
                                   override (or stop overriding) a receiver endpoint URL
  routing enable|disable --emsp CC/PID --cpo CC/PID
  routing list
  deliveries list [--state pending|dead|unroutable|delivered] [--emsp CC/PID] [--cpo CC/PID]
                  [--reason TEXT] [--older-than 30m] [--limit N]
                                   dead letters, unroutable and pending records
  deliveries redrive (--id N | --emsp CC/PID | --cpo CC/PID | --reason TEXT | --older-than D | --all)
                                   make dead and unroutable records pending again (after a fix)
  deliveries replay --topic sessions|cdrs --emsp CC/PID (--from-time ISO | --from-offset N)
                    [--rate N] [--dry-run]
                                   deliver a topic again to one eMSP (rate cap in records/s)
  readmodel rebuild --model locations|tariffs
                                   rebuild a read model from its topic while the old one serves,
                                   then switch over (progress on stderr)
  quarantine list [--group G] [--all]
                                   records consumers could not apply (--all: resolved ones too)
  quarantine redrive (--id N | --group G | --all)
                                   apply them again after a fix, through their consumer; waits
                                   for the outcome (applied, superseded, or quarantined again)
  quarantine discard --id N        resolve one without applying it
`;

class UsageError extends Error {}

function need(values: Record<string, string | boolean | undefined>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v.trim() === '') throw new UsageError(`--${name} is required`);
  return v.trim();
}

function role(values: Record<string, string | boolean | undefined>): PartnerRole {
  const r = need(values, 'role').toUpperCase();
  if (r !== 'CPO' && r !== 'EMSP') throw new UsageError('--role must be CPO or EMSP');
  return r;
}

function partyRef(text: string, flag: string): PartyRef {
  const m = /^([A-Za-z]{2})[/-]([A-Za-z0-9]{3})$/.exec(text);
  if (!m?.[1] || !m[2]) throw new UsageError(`--${flag} must look like CC/PID, e.g. NL/ABC`);
  return { countryCode: m[1].toUpperCase(), partyId: m[2].toUpperCase() };
}

const options = {
  role: { type: 'string' },
  country: { type: 'string' },
  party: { type: 'string' },
  name: { type: 'string' },
  platform: { type: 'string' },
  module: { type: 'string' },
  url: { type: 'string' },
  emsp: { type: 'string' },
  cpo: { type: 'string' },
  model: { type: 'string' },
  state: { type: 'string' },
  reason: { type: 'string' },
  'older-than': { type: 'string' },
  limit: { type: 'string' },
  id: { type: 'string' },
  all: { type: 'boolean', default: false },
  topic: { type: 'string' },
  group: { type: 'string' },
  'from-time': { type: 'string' },
  'from-offset': { type: 'string' },
  rate: { type: 'string' },
  'dry-run': { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/** Runs one hubctl command; resolves to the process exit code. */
export async function runHubctl(argv: readonly string[], deps: HubctlDeps): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (e) {
    deps.err(`${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const json = values.json;
  const op: OperatorDeps = { store: deps.store, source: deps.source, actor: deps.actor };
  const print = (human: string, data: unknown) => deps.out(json ? `${JSON.stringify(data, null, 2)}\n` : `${human}\n`);
  const audit = async () => {
    const published = await deps.publishAudit();
    if (!published) deps.err('note: change saved; its audit event is queued and will reach the registry topic once Kafka is reachable\n');
    return published;
  };
  const party = () => ({ countryCode: need(values, 'country'), partyId: need(values, 'party'), role: role(values) });
  const [group, action] = positionals;

  try {
    if (values.help || !group) {
      deps.out(USAGE);
      return group || values.help ? 0 : 2;
    }
    switch (`${group} ${action ?? ''}`.trim()) {
      case 'party register': {
        const result = await registerParty(op, {
          party: party(),
          name: need(values, 'name'),
          ...(values.platform ? { platformId: values.platform } : {}),
        });
        const auditPublished = await audit();
        print(
          `registered ${partyKey(party())}/${role(values)} on platform ${result.platformId}\n` +
            `initial token (give it to the partner through a secure channel; it works once, for credentials and versions):\n${result.initialToken}`,
          { platform_id: result.platformId, initial_token: result.initialToken, audit_published: auditPublished },
        );
        return 0;
      }
      case 'party token': {
        const result = await reissueInitialToken(op, party());
        const auditPublished = await audit();
        print(`new initial token for ${partyKey(party())}/${role(values)} (earlier ones no longer work):\n${result.initialToken}`, {
          platform_id: result.platformId,
          initial_token: result.initialToken,
          audit_published: auditPublished,
        });
        return 0;
      }
      case 'party list':
      case 'party show': {
        const filterRole = values.role ? role(values) : undefined;
        const list = action === 'show' ? [await deps.store.findParty(party())].filter((p) => p !== undefined) : await deps.store.listParties(filterRole ? { role: filterRole } : {});
        if (action === 'show' && list.length === 0) throw new OperatorInputError(`no such party ${partyKey(party())}/${role(values)}`);
        const rows = list.map((p) => ({
          country_code: p.countryCode,
          party_id: p.partyId,
          role: p.role,
          name: p.name,
          platform_id: p.platformId,
          status: p.connectionStatus,
          registered: p.registered,
          last_probe_at: p.lastProbeAt?.toISOString() ?? null,
          last_probe_error: p.lastProbeError ?? null,
          receiver_overrides: p.receiverOverrides,
        }));
        const human = rows.length === 0
          ? 'no parties registered'
          : [
              'PARTY      ROLE  STATUS     LAST PROBE                NAME',
              ...rows.map((r) =>
                `${`${r.country_code}/${r.party_id}`.padEnd(10)} ${r.role.padEnd(5)} ${r.status.padEnd(10)} ${(r.last_probe_at ?? '-').padEnd(25)} ${r.name}` +
                (r.last_probe_error ? `\n           last probe error: ${r.last_probe_error}` : '') +
                Object.entries(r.receiver_overrides).map(([m, u]) => `\n           ${m} receiver: ${u}`).join(''),
              ),
            ].join('\n');
        print(human, action === 'show' ? rows[0] : rows);
        return 0;
      }
      case 'party suspend':
      case 'party reinstate': {
        await setSuspended(op, { party: party(), suspended: action === 'suspend' });
        await audit();
        print(`${partyKey(party())}/${role(values)} ${action === 'suspend' ? 'suspended' : 'reinstated'}`, { ok: true });
        return 0;
      }
      case 'endpoint set':
      case 'endpoint clear': {
        const module = need(values, 'module');
        const url = action === 'set' ? need(values, 'url') : undefined;
        await overrideEndpoint(op, { party: party(), module, url });
        await audit();
        print(url ? `${module} receiver of ${partyKey(party())}/${role(values)} set to ${url}` : `${module} receiver override of ${partyKey(party())}/${role(values)} removed`, {
          ok: true,
        });
        return 0;
      }
      case 'routing enable':
      case 'routing disable': {
        const emsp = partyRef(need(values, 'emsp'), 'emsp');
        const cpo = partyRef(need(values, 'cpo'), 'cpo');
        await setRoutingRule(op, { emsp, cpo, enabled: action === 'enable' });
        await audit();
        print(`routing ${partyKey(emsp)} (eMSP) <-> ${partyKey(cpo)} (CPO) ${action}d`, { ok: true });
        return 0;
      }
      case 'routing list': {
        const rules = await deps.store.listRoutingRules();
        const rows = rules.map((r) => ({ emsp: partyKey(r.emsp), cpo: partyKey(r.cpo), enabled: r.enabled, updated_at: r.updatedAt.toISOString() }));
        print(rows.length === 0 ? 'no routing rules' : rows.map((r) => `${r.emsp} -> ${r.cpo} ${r.enabled ? 'enabled' : 'disabled'} (${r.updated_at})`).join('\n'), rows);
        return 0;
      }
      case 'deliveries list':
      case 'deliveries redrive': {
        const filter = deliveryFilter(values);
        const { deliveries } = deps.deliveries();
        if (action === 'redrive') {
          const narrowed = filter.id || filter.emsp || filter.cpo || filter.reason || filter.olderThanSeconds !== undefined;
          if (!narrowed && !values.all) throw new UsageError('name what to re-drive (--id, --emsp, --cpo, --reason, --older-than) or pass --all');
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
            : json.map((r) => `#${r.id} ${r.kind} ${r.cpo} -> ${r.emsp} ${r.object_id} ${r.state} attempts=${r.attempts} ${r.reason ?? r.last_error ?? ''}`).join('\n'),
          json,
        );
        return 0;
      }
      case 'deliveries replay': {
        const topic = need(values, 'topic');
        if (topic !== 'sessions' && topic !== 'cdrs') throw new UsageError('--topic must be sessions or cdrs');
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
            kind: topic === 'sessions' ? 'session' : 'cdr',
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
      case 'readmodel rebuild': {
        const model = need(values, 'model');
        if (model !== 'locations' && model !== 'tariffs') throw new UsageError('--model must be locations or tariffs');
        let lastLine = 0;
        const result = await rebuildReadModel(deps.readModels(), model, (p) => {
          if (deps.interactive) deps.err(`\r${progressBar(p)}`);
          else if (Date.now() - lastLine > 1000) {
            lastLine = Date.now();
            deps.err(`${progressBar(p)}\n`);
          }
        });
        if (deps.interactive) deps.err('\n');
        print(
          `${model} rebuilt as generation ${result.generation}: ${result.events} events, ${result.rows} rows in ${result.seconds.toFixed(1)} s (${result.eventsPerSecond.toFixed(0)} events/s); now serving`,
          { model, generation: result.generation, events: Number(result.events), rows: result.rows, seconds: result.seconds, events_per_second: result.eventsPerSecond },
        );
        return 0;
      }
      case 'quarantine list':
      case 'quarantine redrive':
      case 'quarantine discard': {
        if (values.id !== undefined && !/^\d+$/.test(values.id)) throw new UsageError('--id must be a record number');
        const answer = await runQuarantineCommand(deps.quarantine(), { action: action as 'list' | 'redrive' | 'discard', id: values.id, group: values.group, all: values.all, waitMs: 30_000 });
        if (answer.code === 2) throw new UsageError(answer.human);
        print(answer.human, answer.data);
        return answer.code;
      }
      default:
        throw new UsageError(`unknown command "${positionals.join(' ')}"`);
    }
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

const DURATION = /^(\d+)(s|m|h|d)$/;

function deliveryFilter(values: Record<string, string | boolean | undefined>): DeliveryFilter {
  const text = (name: string) => (typeof values[name] === 'string' ? (values[name]) : undefined);
  const filter: { -readonly [K in keyof DeliveryFilter]: DeliveryFilter[K] } = {};
  const state = text('state');
  if (state) {
    const states = state.split(',') as DeliveryState[];
    if (!states.every((s) => ['pending', 'delivered', 'dead', 'unroutable'].includes(s))) throw new UsageError('--state must be pending, delivered, dead or unroutable');
    filter.states = states;
  }
  const emsp = text('emsp');
  if (emsp) filter.emsp = partyRef(emsp, 'emsp');
  const cpo = text('cpo');
  if (cpo) filter.cpo = partyRef(cpo, 'cpo');
  const reason = text('reason');
  if (reason) filter.reason = reason;
  const id = text('id');
  if (id) {
    if (!/^\d+$/.test(id)) throw new UsageError('--id must be a record number');
    filter.id = id;
  }
  const older = text('older-than');
  if (older) {
    const m = DURATION.exec(older);
    if (!m?.[1] || !m[2]) throw new UsageError('--older-than must look like 30s, 15m, 2h or 1d');
    filter.olderThanSeconds = Number(m[1]) * ({ s: 1, m: 60, h: 3600, d: 86400 } as Record<string, number>)[m[2]]!;
  }
  const limit = text('limit');
  if (limit) filter.limit = Number(limit);
  return filter;
}
