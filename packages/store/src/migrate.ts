import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pgPool, type PoolClient } from './pg-pool.ts';
import type { Database } from './pool.ts';

// Applies infra/migrations/NNN_*.sql in order, once each (docs/decisions/0004-migrations-for-big-tables.md).
// An advisory lock makes concurrent starts of several services safe. Each applied file's SHA-256 is
// recorded; a file changed after it was applied stops the runner, because the database no longer
// matches what the repository says it is. A file whose first line is NO_TRANSACTION runs outside a
// transaction, one statement at a time, so it can build an index on a large table CONCURRENTLY
// (which Postgres refuses inside a transaction block) without blocking writes for the whole build.
const MIGRATION_LOCK = 7_331_001;

/** The first line of a migration that must run outside a transaction. */
export const NO_TRANSACTION = '-- migrate: no-transaction';

/** Applied migrations whose files changed since: the runner applies nothing while there is one. */
export class MigrationChanged extends Error {
  readonly files: readonly string[];
  constructor(files: readonly string[]) {
    super(`applied migrations changed since they were applied: ${files.join(', ')} (restore them as they were; add a new migration for a new change)`);
    this.name = 'MigrationChanged';
    this.files = files;
  }
}

const checksumOf = (sql: string): string => createHash('sha256').update(sql).digest('hex');

/**
 * The statements of a no-transaction migration: split at semicolons that end a line. Such a file
 * holds plain statements (no function bodies or DO blocks, whose semicolons would be split too).
 */
export function noTransactionStatements(sql: string): string[] {
  return sql
    .split(/;[ \t]*(?:\r?\n|$)/)
    .map((s) =>
      s
        .split('\n')
        .filter((line) => !line.trim().startsWith('--'))
        .join('\n')
        .trim(),
    )
    .filter((s) => s.length > 0);
}

async function runFile(client: PoolClient, file: string, sql: string): Promise<void> {
  const record = () => client.query('insert into schema_migrations (version, checksum) values ($1, $2)', [file, checksumOf(sql)]);
  if (sql.startsWith(NO_TRANSACTION)) {
    // Not atomic: a failure leaves the statements before it applied and the file unrecorded, so its
    // statements are written to be run again (if not exists / if exists). A failed CREATE INDEX
    // CONCURRENTLY leaves an invalid index that "if not exists" would keep: drop it, then rerun.
    for (const statement of noTransactionStatements(sql)) await client.query(statement);
    await record();
    return;
  }
  await client.query('begin');
  try {
    await client.query(sql);
    await record();
    await client.query('commit');
  } catch (e) {
    await client.query('rollback');
    throw e;
  }
}

export async function migrate(db: Database, directory: string): Promise<string[]> {
  const pool = pgPool(db);
  const files = (await readdir(directory)).filter((f) => /^\d+_.+\.sql$/.test(f)).sort();
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query('create table if not exists schema_migrations (version text primary key, applied_at timestamptz not null default now())');
    await client.query('alter table schema_migrations add column if not exists checksum text');
    const done = new Map((await client.query<{ version: string; checksum: string | null }>('select version, checksum from schema_migrations')).rows.map((r) => [r.version, r.checksum]));
    const sqlOf = new Map<string, string>();
    for (const file of files) sqlOf.set(file, await readFile(join(directory, file), 'utf8'));
    const changed = files.filter((f) => {
      const stored = done.get(f);
      return typeof stored === 'string' && stored !== checksumOf(sqlOf.get(f) ?? '');
    });
    if (changed.length > 0) throw new MigrationChanged(changed);
    // Applied before checksums were kept: the files as they are now are taken as what was applied.
    for (const [file, stored] of done) {
      const sql = sqlOf.get(file);
      if (stored === null && sql !== undefined) await client.query('update schema_migrations set checksum = $2 where version = $1', [file, checksumOf(sql)]);
    }
    for (const file of files) {
      if (done.has(file)) continue;
      try {
        await runFile(client, file, sqlOf.get(file) ?? '');
        applied.push(file);
      } catch (e) {
        throw new Error(`migration ${file} failed: ${(e as Error).message}`, { cause: e });
      }
    }
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    client.release();
  }
  return applied;
}
