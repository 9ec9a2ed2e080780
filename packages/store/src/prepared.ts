import { createHash } from 'node:crypto';
import type pg from 'pg';

// Named prepared statements for the store's hot queries (docs/decisions/0017-prepared-hot-queries.md).
// A parameterised query without a name is parsed and planned by Postgres on every call; for a
// lookup by key that is most of its cost. With a name, pg prepares it once per connection and then
// only binds and executes it.

const names = new Map<string, string>();

/**
 * The query as a named prepared statement. Only for texts drawn from a fixed set (a call site whose
 * text varies at most by the read model's table): every distinct text stays prepared on each pooled
 * connection while it lives, so a text built from data (a VALUES list per batch) must not come here.
 * The name is a digest of the text, so two call sites never give one name to different texts.
 */
export function prepared(text: string, values: unknown[]): pg.QueryConfig {
  let name = names.get(text);
  if (name === undefined) {
    name = `hub_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
    names.set(text, name);
  }
  return { name, text, values };
}
