// Postgres over TLS: DATABASE_URL carries sslmode and sslrootcert (pg reads them,
// and sslcert/sslkey, from the connection string). A private server started with ssl=on and a
// certificate from a CA this test makes accepts only TLS connections; the hub's pool and the stack's
// database set-up reach it with sslmode=verify-full and the CA, and refuse it without the CA.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createPool, ensureDatabase } from '@hub/store';
import { sqlPool } from '@hub/testing';
import { makeServerCertificates } from '../stack/certs.ts';
import { asServerUser, postgresBinDir } from '../stack/postgres.ts';
import { freePort, run } from '../stack/proc.ts';

const bin = postgresBinDir();

describe('Postgres with ssl=on', { skip: bin ? false : 'no PostgreSQL server binaries in /usr/lib/postgresql' }, () => {
  const home = mkdtempSync(join(tmpdir(), 'hub-pg-tls-'));
  const data = join(home, 'data');
  let port = 0;
  let caFile = '';
  const pg = (tool: string, args: string[]) => {
    const [cmd, argv] = asServerUser(join(bin ?? '', tool), args);
    return run(cmd, argv);
  };
  const url = (db: string, query: string) => `postgres://postgres@127.0.0.1:${port}/${db}${query ? `?${query}` : ''}`;
  const probe = async (databaseUrl: string): Promise<{ ssl: boolean } | Error> => {
    const pool = sqlPool(createPool(databaseUrl, { max: 1, onIdleError: () => undefined }));
    try {
      const { rows } = await pool.query<{ ssl: boolean }>('select ssl from pg_stat_ssl where pid = pg_backend_pid()');
      return { ssl: rows[0]?.ssl ?? false };
    } catch (e) {
      return e as Error;
    } finally {
      await pool.end();
    }
  };

  before(async () => {
    port = await freePort();
    const certs = await makeServerCertificates(join(home, 'certs'));
    caFile = certs.caFile;
    if (process.getuid?.() === 0) await run('chown', ['-R', 'postgres:postgres', home]);
    await run('chmod', ['0600', certs.keyFile]);
    await pg('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
    // TLS or nothing over TCP: a plaintext connection is refused by the server.
    writeFileSync(join(data, 'pg_hba.conf'), ['local all all trust', 'hostssl all all 127.0.0.1/32 trust', 'hostnossl all all 127.0.0.1/32 reject', ''].join('\n'));
    await pg('pg_ctl', ['-D', data, '-l', join(home, 'server.log'), '-w', '-o',
      `-p ${port} -k ${home} -c listen_addresses=127.0.0.1 -c ssl=on -c ssl_cert_file=${certs.certFile} -c ssl_key_file=${certs.keyFile} -c fsync=off`, 'start']);
  });
  after(async () => {
    await pg('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
  });

  it('the hub pool connects with sslmode=verify-full and sslrootcert, over TLS', async () => {
    assert.deepEqual(await probe(url('postgres', `sslmode=verify-full&sslrootcert=${encodeURIComponent(caFile)}`)), { ssl: true });
  });

  it('the stack creates the hub database through the same URL', async () => {
    const hubUrl = url('ocpi_hub_tls', `sslmode=verify-full&sslrootcert=${encodeURIComponent(caFile)}`);
    assert.equal(await ensureDatabase(hubUrl), 'created');
    assert.deepEqual(await probe(hubUrl), { ssl: true });
  });

  it('without the CA the server certificate is refused', async () => {
    const err = await probe(url('postgres', 'sslmode=verify-full'));
    assert.ok(err instanceof Error);
    assert.match(err.message, /self[- ]signed certificate|unable to verify/i);
  });

  it('the server refuses a plaintext connection (sslmode=disable)', async () => {
    const err = await probe(url('postgres', 'sslmode=disable'));
    assert.ok(err instanceof Error);
    assert.match(err.message, /no pg_hba\.conf entry .*no encryption|rejects connection/);
  });
});
