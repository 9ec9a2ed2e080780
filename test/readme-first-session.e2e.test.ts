// The README's first session, run as it is written (README, Your first session): every `npm run
// hubctl` and `npm run partner` line of the block between the first-session markers, in order, on a
// fresh stack (real ingress, projector, dispatcher and prober, Kafka and Postgres). `npm run X --`
// is the entry point of X with the stack's settings, and `<the CPO's initial token>` the token the
// CPO's `party register` printed. A change that breaks the example breaks this test.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTestStack, repoRoot, startService, type ServiceProcess, type TestStack } from '@hub/testing';
import { freePort, hubctl, runNode } from './helpers.ts';

/** The shell words of one command line: plain words and "double-quoted" ones (all the block uses). */
function words(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/"([^"]*)"|(<[^>]*>)|(\S+)/g)) out.push(m[1] ?? m[2] ?? m[3] ?? '');
  return out;
}

/** The command lines of the README's first-session block, comments and blank lines left out. */
function firstSessionCommands(): string[] {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const block = /<!-- first-session -->\s*```sh\n([\s\S]*?)```\s*<!-- \/first-session -->/.exec(readme);
  assert.ok(block?.[1], 'README has a first-session block');
  return block[1].split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
}

describe("the README's first session", () => {
  let stack: TestStack;
  let services: ServiceProcess[] = [];
  let hub: string;
  let env: Record<string, string>;

  before(async () => {
    stack = await createTestStack('readme_first_session');
    const port = await freePort();
    hub = `http://127.0.0.1:${port}`;
    // As `npm start` runs the services for development (infra/stack/run.ts): partners on plain http on loopback.
    env = stack.env({ HUB_PORT: String(port), ALLOW_HTTP_PARTNER_URLS: 'true', PARTNER_ALLOWED_HOSTS: '127.0.0.1,localhost' });
    services = [
      await startService('ingress', env, /ingress listening/),
      await startService('projector', env, /projector running/, 60_000),
      await startService('dispatcher', env, /dispatcher running/, 60_000),
    ];
  });
  after(async () => {
    await Promise.allSettled(services.map((s) => s.stop()));
    await stack?.cleanup();
  });

  it('registers a CPO and an eMSP, connects both, routes them, and the location the CPO pushed reaches the eMSP', async () => {
    const commands = firstSessionCommands();
    assert.ok(commands.length >= 5, `the block has its commands: ${commands.join(' | ')}`);
    const initialTokens = new Map<string, string>();
    const outputs: string[] = [];
    for (const line of commands) {
      const [npm, verb, script, dashes, ...args] = words(line);
      assert.equal(`${npm} ${verb} ${dashes}`, 'npm run --', `a command the test knows how to run: ${line}`);
      const resolved = args.map((a) => {
        const placeholder = /^<the (\w+)'s initial token>$/.exec(a);
        if (!placeholder) return a;
        const token = initialTokens.get(placeholder[1]!.toUpperCase());
        assert.ok(token, `${a} is printed by an earlier command of the block`);
        return token;
      });
      let result;
      if (script === 'hubctl') result = await hubctl(env, resolved);
      else if (script === 'partner') result = await runNode(join(repoRoot, 'packages', 'sandbox', 'src', 'try-partner.ts'), [...resolved, '--hub', hub]);
      else assert.fail(`npm run ${String(script)} is not a command of the first session`);
      assert.equal(result.code, 0, `${line}\n${result.stdout}${result.stderr}`);
      outputs.push(result.stdout);
      if (script === 'hubctl' && args[0] === 'party' && args[1] === 'register') {
        const role = args[args.indexOf('--role') + 1] ?? '';
        // The token is the last line hubctl prints after "initial token (...):".
        const token = /initial token[^\n]*:\n(\S+)/.exec(result.stdout)?.[1];
        assert.ok(token, `party register printed an initial token:\n${result.stdout}`);
        initialTokens.set(role.toUpperCase(), token);
      }
    }
    const all = outputs.join('\n');
    assert.match(all, /location pushed: NL\/ABC\/SBX-LOC-1/);
    assert.match(all, /locations pulled: 1\n\s+NL\/ABC\/SBX-LOC-1 "[^"]+", \d+ EVSEs, \d+ connectors/, 'the eMSP pulled exactly the location the CPO pushed');
    const list = outputs.at(-1) ?? '';
    assert.match(list, /NL\/ABC/);
    assert.match(list, /DE\/EMS/);
  });
});
