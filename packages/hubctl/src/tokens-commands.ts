import { randomUUID } from 'node:crypto';
import { partyKey } from '@hub/ocpi';
import { OperatorInputError } from '@hub/registry';
import { tokenResendRows } from '@hub/store';
import { need, type CommandContext } from './command-context.ts';
import { partyRef } from './delivery-filter.ts';

// hubctl tokens resend: what the dispatcher does by itself when a routing rule is
// enabled or a party reinstated (services/dispatcher/src/registry-consumer.ts), on demand: the eMSP's
// current tokens (tokens read model) become token delivery rows for each CPO actively routed to it
// (or the one named). A CPO whose row already holds a token's version is not sent it again.

export async function runTokensCommand(action: string, ctx: CommandContext): Promise<number | undefined> {
  const { deps, values, print } = ctx;
  if (action !== 'resend') return undefined;
  const emsp = partyRef(need(values, 'emsp'), 'emsp');
  const cpo = values.cpo ? partyRef(values.cpo, 'cpo') : undefined;
  if (!deps.tokens) throw new Error('hubctl was started without the tokens store');
  const { source, deliveries } = deps.tokens();
  const scope = cpo ? { emsp, cpo } : { party: { ...emsp, role: 'EMSP' as const } };
  const meta = { correlationId: `hubctl-tokens-resend-${randomUUID()}`, eventTime: new Date().toISOString() };
  const result = await tokenResendRows(source, scope, meta, async (rows) => {
    await deliveries.enqueue(rows);
  });
  if (result.length === 0) throw new OperatorInputError(`no active route from ${partyKey(emsp)} (eMSP)${cpo ? ` to ${partyKey(cpo)} (CPO)` : ''}: nothing to send`);
  const rows = result.flatMap((r) => r.cpos.map((c) => ({ emsp: partyKey(r.emsp), cpo: partyKey(c), tokens: r.rows / r.cpos.length })));
  print(rows.map((r) => `${r.tokens} token(s) of ${r.emsp} queued for ${r.cpo} (versions it already holds are not sent again)`).join('\n'), rows);
  return 0;
}
