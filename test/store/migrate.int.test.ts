// The migration runner on real Postgres (docs/decisions/0004-migrations-for-big-tables.md): each
// applied file's checksum is kept and a changed one stops the runner before it applies anything; a
// file marked no-transaction runs outside a transaction, so CREATE INDEX CONCURRENTLY works (Postgres
// refuses it inside a transaction block); the repository's own migrations apply from scratch.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createPool, dropDatabase, ensureDatabase, migrate, MigrationChanged, NO_TRANSACTION, noTransactionStatements } from '@hub/store';
import { repoRoot, sqlPool, type SqlPool } from '@hub/testing';

describe('migration runner', () => {
  let pool: SqlPool;
  let url: string;
  let dir: string;
  before(async () => {
    const server = new URL(process.env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres');
    server.pathname = `/hubtest_migrate_${randomBytes(4).toString('hex')}`;
    url = server.toString();
    await ensureDatabase(url);
    pool = sqlPool(createPool(url, { max: 2, application: 'test-migrate', onIdleError: () => undefined }));
    dir = mkdtempSync(join(tmpdir(), 'migrations-'));
  });
  after(async () => {
    await pool?.end();
    await dropDatabase(url).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('applies each file once and refuses to run when an applied file changed', async () => {
    writeFileSync(join(dir, '001_table.sql'), 'create table t (id int primary key, v text);\n');
    assert.deepEqual(await migrate(pool, dir), ['001_table.sql']);
    assert.deepEqual(await migrate(pool, dir), [], 'nothing is applied twice');
    const { rows } = await pool.query<{ checksum: string }>("select checksum from schema_migrations where version = '001_table.sql'");
    assert.match(rows[0]?.checksum ?? '', /^[0-9a-f]{64}$/);

    writeFileSync(join(dir, '001_table.sql'), 'create table t (id int primary key, v text, w text);\n');
    writeFileSync(join(dir, '002_more.sql'), 'alter table t add column x int;\n');
    await assert.rejects(migrate(pool, dir), (e: unknown) => e instanceof MigrationChanged && e.files.join() === '001_table.sql');
    const columns = await pool.query("select 1 from information_schema.columns where table_name = 't' and column_name = 'x'");
    assert.equal(columns.rowCount, 0, 'a later migration is not applied while an applied one differs');

    writeFileSync(join(dir, '001_table.sql'), 'create table t (id int primary key, v text);\n');
    assert.deepEqual(await migrate(pool, dir), ['002_more.sql'], 'restored, the runner goes on');
  });

  it('records the checksum of migrations applied before checksums were kept', async () => {
    await pool.query("update schema_migrations set checksum = null where version = '002_more.sql'");
    assert.deepEqual(await migrate(pool, dir), []);
    const { rows } = await pool.query<{ checksum: string | null }>("select checksum from schema_migrations where version = '002_more.sql'");
    assert.match(rows[0]?.checksum ?? '', /^[0-9a-f]{64}$/);
  });

  it('runs a no-transaction file statement by statement, so an index is built CONCURRENTLY', async () => {
    const concurrently = "create index concurrently if not exists t_v on t (v) where v is not null;\n-- a comment between statements\ndrop index concurrently if exists t_missing;\n";
    writeFileSync(join(dir, '003_plain.sql'), concurrently.replace('-- a comment', '-- inside a transaction'));
    await assert.rejects(migrate(pool, dir), /cannot run inside a transaction block/, 'without the mark Postgres refuses it');
    rmSync(join(dir, '003_plain.sql'));
    writeFileSync(join(dir, '003_index.sql'), `${NO_TRANSACTION}\n${concurrently}`);
    assert.deepEqual(await migrate(pool, dir), ['003_index.sql']);
    const index = await pool.query<{ valid: boolean }>("select i.indisvalid as valid from pg_index i join pg_class c on c.oid = i.indexrelid where c.relname = 't_v'");
    assert.equal(index.rows[0]?.valid, true);
    assert.deepEqual(noTransactionStatements(`${NO_TRANSACTION}\n${concurrently}`), ['create index concurrently if not exists t_v on t (v) where v is not null', 'drop index concurrently if exists t_missing']);
  });

  it("the repository's migrations apply to an empty database and leave the claim index valid", async () => {
    const server = new URL(url);
    server.pathname = `/hubtest_migrate_repo_${randomBytes(4).toString('hex')}`;
    await ensureDatabase(server.toString());
    const fresh = sqlPool(createPool(server.toString(), { max: 1, application: 'test-migrate-repo', onIdleError: () => undefined }));
    try {
      await migrate(fresh, join(repoRoot, 'infra', 'migrations'));
      const index = await fresh.query<{ name: string; valid: boolean }>(
        "select c.relname as name, i.indisvalid as valid from pg_index i join pg_class c on c.oid = i.indexrelid where c.relname in ('deliveries_pending_recipient', 'deliveries_pending_emsp')",
      );
      assert.deepEqual(index.rows, [{ name: 'deliveries_pending_recipient', valid: true }]);
    } finally {
      await fresh.end();
      await dropDatabase(server.toString()).catch(() => undefined);
    }
  });
});
