// hubctl refuses a flag its command does not take (exit 2, the usage), instead of ignoring it: an
// operator who types `party list --emsp DE/EMS` expecting a filter learns that there is none. The
// flags come from the usage text (usage.ts flagsByCommand), the one list a user reads.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runHubctl, type HubctlDeps } from '../src/cli.ts';
import { COMMAND_FLAGS, flagsByCommand } from '../src/usage.ts';

function run(argv: string[]): Promise<{ code: number; err: string }> {
  let err = '';
  // Refused before any dependency is touched: every port throws if it were.
  const unused = () => {
    throw new Error('a refused command line reached a dependency');
  };
  const deps = new Proxy({ err: (t: string) => (err += t), out: () => undefined }, { get: (target, key) => (key in target ? target[key as keyof typeof target] : unused) }) as unknown as HubctlDeps;
  return runHubctl(argv, deps).then((code) => ({ code, err }));
}

describe('hubctl: flags a command does not take', () => {
  it('are refused with exit code 2, naming the command and the flags', async () => {
    const party = await run(['party', 'list', '--emsp', 'DE/EMS']);
    assert.equal(party.code, 2);
    assert.match(party.err, /party list does not take --emsp/);
    const routing = await run(['routing', 'enable', '--emsp', 'DE/EMS', '--cpo', 'NL/ABC', '--model', 'locations', '--all']);
    assert.equal(routing.code, 2);
    assert.match(routing.err, /routing enable does not take --model, --all/);
  });

  it('every command takes its own flags, --json and --help', () => {
    assert.deepEqual([...(COMMAND_FLAGS.get('party register') ?? [])].sort(), ['country', 'help', 'json', 'name', 'party', 'platform', 'role', 'versions']);
    assert.deepEqual([...(COMMAND_FLAGS.get('status') ?? [])].sort(), ['help', 'json']);
    assert.ok(COMMAND_FLAGS.get('deliveries redrive')?.has('older-than'));
    assert.ok(COMMAND_FLAGS.get('party reinstate')?.has('role'), 'a|b actions share their line');
  });

  it('reads continuation lines as part of the command above them', () => {
    const flags = flagsByCommand('usage: x\n\n  thing do --a A\n              [--b B]\n                                   explained (--c too)\n  other\n');
    assert.deepEqual([...(flags.get('thing do') ?? [])].sort(), ['a', 'b', 'c', 'help', 'json']);
    assert.deepEqual([...(flags.get('other') ?? [])].sort(), ['help', 'json']);
  });
});
