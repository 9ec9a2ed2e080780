import { partyKey } from '@hub/ocpi';
import { setRoutingRule } from '@hub/registry';
import { need, type CommandContext } from './command-context.ts';
import { partyRef } from './delivery-filter.ts';

// hubctl routing: enable, disable, list the routing rules between eMSPs and CPOs (interface document, What the service does 5).

export async function runRoutingCommand(action: string, ctx: CommandContext): Promise<number | undefined> {
  const { deps, values, op, print, audit } = ctx;
  switch (action) {
    case 'enable':
    case 'disable': {
      const emsp = partyRef(need(values, 'emsp'), 'emsp');
      const cpo = partyRef(need(values, 'cpo'), 'cpo');
      await setRoutingRule(op, { emsp, cpo, enabled: action === 'enable' });
      await audit();
      print(`routing ${partyKey(emsp)} (eMSP) <-> ${partyKey(cpo)} (CPO) ${action}d`, { ok: true });
      return 0;
    }
    case 'list': {
      const rules = await deps.store.listRoutingRules();
      const rows = rules.map((r) => ({ emsp: partyKey(r.emsp), cpo: partyKey(r.cpo), enabled: r.enabled, updated_at: r.updatedAt.toISOString() }));
      print(rows.length === 0 ? 'no routing rules' : rows.map((r) => `${r.emsp} -> ${r.cpo} ${r.enabled ? 'enabled' : 'disabled'} (${r.updated_at})`).join('\n'), rows);
      return 0;
    }
    default:
      return undefined;
  }
}
