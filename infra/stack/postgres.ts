import { existsSync, mkdirSync, readdirSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDatabase } from '@hub/store';
import { local } from './paths.ts';
import { portOpen, run, say } from './proc.ts';

// Postgres for the stack: DATABASE_URL when given; otherwise the server at 127.0.0.1:5432; where none
// answers, a private cluster from the Debian binaries in .local/pg (port 55432), started and stopped
// with the stack.

export interface Database {
  /** URL of the server with the database name replaced by `name`. */
  url(name: string): string;
  stop(): Promise<void>;
}

const PRIVATE_PORT = 55432;

function withDatabase(serverUrl: string, name: string): string {
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

export function postgresBinDir(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base).filter((v) => existsSync(join(base, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(base, versions[0], 'bin') : undefined;
}

/** initdb and postgres refuse to run as root: run them as the postgres system user then. */
export function asServerUser(bin: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
}

async function startPrivateCluster(): Promise<Database> {
  let bin = postgresBinDir();
  if (!bin && process.getuid?.() === 0) {
    say('no PostgreSQL server binaries: installing Debian\'s postgresql package');
    await run('apt-get', ['update', '-q']);
    await run('apt-get', ['install', '-y', '-q', 'postgresql']);
    bin = postgresBinDir();
  }
  if (!bin) throw new Error('no PostgreSQL answers at 127.0.0.1:5432 and no server binaries are installed: set DATABASE_URL');
  const home = join(local, 'pg');
  const data = join(home, 'data');
  mkdirSync(home, { recursive: true });
  if (process.getuid?.() === 0) {
    await run('chown', ['-R', 'postgres:postgres', home]);
    chmodSync(local, 0o755);
  }
  if (!existsSync(join(data, 'PG_VERSION'))) {
    say(`creating a private PostgreSQL cluster in ${data}`);
    const [cmd, args] = asServerUser(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
    await run(cmd, args);
  }
  if (!(await portOpen(PRIVATE_PORT))) {
    const [cmd, args] = asServerUser(join(bin, 'pg_ctl'), [
      '-D', data, '-l', join(home, 'server.log'), '-w',
      '-o', `-p ${PRIVATE_PORT} -k ${home} -c listen_addresses=127.0.0.1`, 'start',
    ]);
    await run(cmd, args);
  }
  const server = `postgres://postgres@127.0.0.1:${PRIVATE_PORT}/postgres`;
  return {
    url: (name) => withDatabase(server, name),
    async stop() {
      const [cmd, args] = asServerUser(join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop']);
      await run(cmd, args).catch(() => undefined);
    },
  };
}

export async function provideDatabase(databaseUrl: string | undefined): Promise<Database> {
  if (databaseUrl) {
    return { url: (name) => withDatabase(databaseUrl, name), stop: async () => undefined };
  }
  const system = 'postgres://postgres@127.0.0.1:5432/postgres';
  if (await portOpen(5432)) {
    return { url: (name) => withDatabase(system, name), stop: async () => undefined };
  }
  return startPrivateCluster();
}

export { ensureDatabase };
