// docs/reference/configuration.md against the configuration readers: every variable a service or
// hubctl reads is in its table with that reader among its users, and every variable in the table is
// read by a reader or by the stack's own scripts (npm start, npm test, npm run bench). A reader is
// run with an environment that records what it is asked for.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { readDispatcherConfig } from '@hub/dispatcher';
import { readHubctlConfig } from '@hub/hubctl';
import { readIngressConfig } from '@hub/ingress';
import { readProberConfig } from '@hub/prober';
import { readProjectorConfig } from '@hub/projector';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The variables a reader asks for, with each setting the reader reads only when another is set (TLS files, SASL) set too. */
function readBy(reader: (env: Record<string, string | undefined>) => unknown): Set<string> {
  const asked = new Set<string>();
  const given: Record<string, string> = { KAFKA_SASL_MECHANISM: 'plain', KAFKA_SSL: 'true' };
  const env = new Proxy(given, {
    get(target, name) {
      if (typeof name === 'string') asked.add(name);
      return Reflect.get(target, name) as unknown;
    },
  });
  try {
    reader(env);
  } catch {
    // A required setting missing (HUB_SECRET_KEY...): what was asked before is what counts.
  }
  return asked;
}

const READERS = {
  ingress: readIngressConfig,
  projector: readProjectorConfig,
  dispatcher: readDispatcherConfig,
  prober: readProberConfig,
  hubctl: readHubctlConfig,
} as const;

/** The table's rows: the variables of the first cell and the "used by" cell. */
function documented(): Array<{ names: string[]; usedBy: string }> {
  const doc = readFileSync(`${root}/docs/reference/configuration.md`, 'utf8');
  return doc.split('\n').flatMap((line) => {
    const cells = line.split(' | ');
    if (!line.startsWith('| `') || cells.length < 4) return [];
    const names = [...(cells[0] ?? '').matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1] as string);
    return names.length > 0 ? [{ names, usedBy: cells[2] ?? '' }] : [];
  });
}

describe('docs/reference/configuration.md', () => {
  const rows = documented();
  const usedByOf = new Map(rows.flatMap((r) => r.names.map((n) => [n, r.usedBy] as const)));

  for (const [name, reader] of Object.entries(READERS)) {
    it(`lists every variable the ${name} reads, with the ${name} among its users`, () => {
      const missing = [...readBy(reader)].filter((v) => !usedByOf.has(v));
      assert.deepEqual(missing, [], `read by the ${name}, not in the table`);
      // "all" names every service; hubctl is named where it reads a variable too.
      const users = (v: string) => usedByOf.get(v) ?? '';
      const unnamed = [...readBy(reader)].filter((v) => !users(v).includes(name) && !(name !== 'hubctl' && /\ball\b/.test(users(v))));
      assert.deepEqual(unnamed, [], `read by the ${name}, whose row does not name it`);
    });
  }

  it('every variable in the table is read by a reader or by the stack\'s scripts', () => {
    const byReaders = new Set(Object.values(READERS).flatMap((reader) => [...readBy(reader)]));
    const scripts = execFileSync('git', ['grep', '-h', '-o', '-E', '[A-Z][A-Z0-9_]{3,}', '--', 'infra/stack', 'bench', 'packages/config/src', 'services/*/src/main.ts'], { cwd: root, encoding: 'utf8' });
    const inScripts = new Set(scripts.split('\n'));
    const unread = [...usedByOf.keys()].filter((v) => !byReaders.has(v) && !inScripts.has(v));
    assert.deepEqual(unread, []);
  });
});
