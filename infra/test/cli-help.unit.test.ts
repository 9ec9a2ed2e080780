// `npm start -- --help`, `npm test -- --help`, `npm run bench -- --help` and `npm run partner -- --help` print their usage and
// start nothing: no Kafka, no Postgres, no service (the stack CLI says "[stack] ..." before it
// provisions anything, so its silence shows nothing was started).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { root } from '../stack/paths.ts';

describe('the stack CLI --help', () => {
  for (const [command, first] of [['start', 'usage: npm start'], ['test', 'usage: npm test'], ['bench', 'usage: npm run bench'], ['partner', 'usage: npm run partner']] as const) {
    it(`${command} --help prints its usage and starts nothing`, () => {
      const run = spawnSync(process.execPath, [...process.execArgv, join(root, 'infra', 'stack', 'cli.ts'), command, '--help'], { encoding: 'utf8', timeout: 30_000 });
      assert.equal(run.status, 0, run.stderr);
      assert.ok(run.stdout.startsWith(first), run.stdout);
      assert.doesNotMatch(`${run.stdout}${run.stderr}`, /\[stack\]/);
    });
  }
});
