import { partyKey } from '@hub/ocpi';
import { OperatorInputError } from '@hub/registry';
import { DRIVER_DATA_KEY_CACHE_MS } from '@hub/store';
import { need, type CommandContext } from './command-context.ts';
import { partyRef } from './delivery-filter.ts';

// hubctl erase token: a driver's right to erasure (docs/how-to/erase-driver-data.md,
// docs/decisions/0013-erasure-by-destroying-data-keys.md). The token's data key is destroyed, so its
// personal fields in every event read as the placeholder from now on, and the plain copies in
// Postgres are overwritten in the same transaction. Running services may still hold the key in
// their cache (DRIVER_DATA_KEY_CACHE_MS) and write a plain copy of an event they consume meanwhile,
// so the same erasure runs a second time once every cache has let the key go; it is idempotent. The
// uid is never printed back.

/** The second pass waits for the services' key caches, plus a margin for an event being applied. */
const SETTLE_SECONDS = DRIVER_DATA_KEY_CACHE_MS / 1000 + 5;

const TOKEN_TYPES = new Set(['AD_HOC_USER', 'APP_USER', 'OTHER', 'RFID']);

export async function runEraseCommand(action: string, ctx: CommandContext): Promise<number | undefined> {
  const { deps, values, print } = ctx;
  if (action !== 'token') return undefined;
  const emsp = partyRef(need(values, 'emsp'), 'emsp');
  const uid = need(values, 'uid');
  const type = (values.type ?? 'RFID').toUpperCase();
  if (!TOKEN_TYPES.has(type)) throw new OperatorInputError(`--type must be one of ${[...TOKEN_TYPES].join(', ')} (mod_tokens.asciidoc, TokenType)`);
  if (!deps.erase) throw new OperatorInputError('HUB_SECRET_KEY is not set: hubctl needs the key the services use to find the token\'s data key');
  const settleSeconds = values['settle-seconds'] === undefined ? SETTLE_SECONDS : Number(values['settle-seconds']);
  if (!Number.isInteger(settleSeconds) || settleSeconds < 0) throw new OperatorInputError('--settle-seconds must be a whole number of seconds, 0 or more');
  const token = { countryCode: emsp.countryCode, partyId: emsp.partyId, uid, type };
  const erase = deps.erase();
  const first = await erase(token);
  const what = `token (${type}) of ${partyKey(emsp)}`;
  deps.err(`${first.keyDestroyed ? 'data key destroyed' : 'no data key (none sealed, or erased before)'} for the ${what}; waiting ${settleSeconds} s for the services' key caches, then erasing once more\n`);
  await new Promise((r) => setTimeout(r, settleSeconds * 1000));
  const second = await erase(token);
  const tokenRows = first.tokenRows + second.tokenRows;
  const deliveryRows = first.deliveryRows + second.deliveryRows;
  const cdrRows = first.cdrRows + second.cdrRows;
  print(
    `${first.keyDestroyed ? 'data key destroyed' : 'no data key (none sealed, or erased before)'} for the ${what}; placeholders written in ${tokenRows} token read-model row(s), ${deliveryRows} delivery row(s), ${cdrRows} received CDR(s) over two passes ${settleSeconds} s apart (${second.tokenRows + second.deliveryRows + second.cdrRows} in the second)`,
    { emsp: partyKey(emsp), type, key_destroyed: first.keyDestroyed, token_rows: tokenRows, delivery_rows: deliveryRows, cdr_rows: cdrRows, second_pass_rows: second.tokenRows + second.deliveryRows + second.cdrRows, settle_seconds: settleSeconds },
  );
  return 0;
}
