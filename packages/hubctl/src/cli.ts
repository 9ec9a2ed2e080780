import { parseArgs } from 'node:util';
import type { EventLog } from '@hub/event-log';
import type { DeliveryStore, Pool, QuarantineStore, ReadModelStore } from '@hub/store';
import { deliveryFilter, partyRef } from './delivery-filter.ts';
import { USAGE, UsageError } from './usage.ts';
import { runQuarantineCommand } from './quarantine.ts';
import { formatHubStatus, readHubStatus } from './status.ts';
import { replayToEmsp } from './replay.ts';
import { progressBar, rebuildReadModel } from './rebuild.ts';
import { partyKey, type PartnerRole } from '@hub/ocpi';
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

export { USAGE };

export interface HubctlDeps {
  readonly store: RegistryStore;
  /** Read models and the event log, for rebuilds; opened only by the commands that need them. */
  readonly readModels: () => { store: ReadModelStore; eventLog: EventLog };
  readonly deliveries: () => { deliveries: DeliveryStore; eventLog: EventLog };
  readonly quarantine: () => QuarantineStore;
  /** The registry's Postgres and the event log, for hubctl status's aggregate queries and lag. */
  readonly status: () => { pool: Pool; eventLog: EventLog };
  /** True when stderr is a terminal (progress bars redraw in place). */
  readonly interactive: boolean;
  /** Publishes queued audit events; resolves to false when Kafka could not be reached. */
  readonly publishAudit: () => Promise<boolean>;
  readonly source: string;
  readonly actor: string;
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}


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
      case 'status': {
        const { pool, eventLog } = deps.status();
        const status = await readHubStatus(pool, eventLog);
        print(formatHubStatus(status), status);
        return 0;
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
