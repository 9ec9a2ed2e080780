import { partyKey } from '@hub/ocpi';
import { overrideEndpoint } from '@hub/registry';
import { need, party, role, type CommandContext } from './command-context.ts';

// hubctl endpoint: set or clear an operator override of a party's receiver URL for a module.

export async function runEndpointCommand(action: string, ctx: CommandContext): Promise<number | undefined> {
  const { values, op, print, audit } = ctx;
  switch (action) {
    case 'set':
    case 'clear': {
      const module = need(values, 'module');
      const url = action === 'set' ? need(values, 'url') : undefined;
      await overrideEndpoint(op, { party: party(values), module, url });
      await audit();
      print(url ? `${module} receiver of ${partyKey(party(values))}/${role(values)} set to ${url}` : `${module} receiver override of ${partyKey(party(values))}/${role(values)} removed`, {
        ok: true,
      });
      return 0;
    }
    default:
      return undefined;
  }
}
