// The simulators' `--token <token>` with a token that starts with "-" (one base64url token in 64).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseArgs } from 'node:util';
import { joinOptionValues } from '../src/cli-args.ts';

const options = { party: { type: 'string' }, token: { type: 'string' } } as const;

describe('joinOptionValues', () => {
  it('lets parseArgs take a token that starts with "-" after --token', () => {
    const args = ['emsp', '--party', 'DE/EMS', '--token', '-Xq3_token'];
    assert.throws(() => parseArgs({ args, options, allowPositionals: true }), /ambiguous/, 'parseArgs alone refuses it');
    const { values, positionals } = parseArgs({ args: joinOptionValues(args, ['token']), options, allowPositionals: true });
    assert.deepEqual({ ...values }, { party: 'DE/EMS', token: '-Xq3_token' });
    assert.deepEqual(positionals, ['emsp']);
  });

  it('leaves other arguments, an --token=value and a trailing --token alone', () => {
    assert.deepEqual(joinOptionValues(['--token=abc', '--party', 'NL/X'], ['token']), ['--token=abc', '--party', 'NL/X']);
    assert.deepEqual(joinOptionValues(['--party', 'NL/X', '--token'], ['token']), ['--party', 'NL/X', '--token']);
  });
});
