import { partyKey } from '@hub/ocpi';
import { OperatorInputError } from '@hub/registry';
import { need, type CommandContext } from './command-context.ts';
import { partyRef } from './delivery-filter.ts';

// hubctl erase token: a driver's right to erasure (docs/how-to/erase-driver-data.md,
// docs/decisions/0013-erasure-by-destroying-data-keys.md). The token's data key is destroyed, so its
// personal fields in every event read as the placeholder from now on, and the plain copies in
// Postgres are overwritten in the same transaction. The uid is never printed back.

const TOKEN_TYPES = new Set(['AD_HOC_USER', 'APP_USER', 'OTHER', 'RFID']);

export async function runEraseCommand(action: string, ctx: CommandContext): Promise<number | undefined> {
  const { deps, values, print } = ctx;
  if (action !== 'token') return undefined;
  const emsp = partyRef(need(values, 'emsp'), 'emsp');
  const uid = need(values, 'uid');
  const type = (values.type ?? 'RFID').toUpperCase();
  if (!TOKEN_TYPES.has(type)) throw new OperatorInputError(`--type must be one of ${[...TOKEN_TYPES].join(', ')} (mod_tokens.asciidoc, TokenType)`);
  if (!deps.erase) throw new OperatorInputError('HUB_SECRET_KEY is not set: hubctl needs the key the services use to find the token\'s data key');
  const result = await deps.erase()({ countryCode: emsp.countryCode, partyId: emsp.partyId, uid, type });
  const what = `token (${type}) of ${partyKey(emsp)}`;
  print(
    `${result.keyDestroyed ? 'data key destroyed' : 'no data key (none sealed, or erased before)'} for the ${what}; placeholders written in ${result.tokenRows} token read-model row(s), ${result.deliveryRows} delivery row(s), ${result.cdrRows} received CDR(s)`,
    { emsp: partyKey(emsp), type, key_destroyed: result.keyDestroyed, token_rows: result.tokenRows, delivery_rows: result.deliveryRows, cdr_rows: result.cdrRows },
  );
  return 0;
}
