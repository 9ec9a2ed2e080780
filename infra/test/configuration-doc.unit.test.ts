// docs/reference/configuration.md is generated (infra/generate-configuration-doc.ts) from the
// configuration readers and packages/config/src/setting-docs.ts, and committed: the committed file must
// be what the generator writes, and every variable of its table is read by a reader or by the stack's
// own scripts (npm start, npm test, npm run bench), which the generator cannot run.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SETTING_DOCS } from '@hub/config';
import { docPath, recordReads, renderConfigurationDoc } from '../generate-configuration-doc.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('docs/reference/configuration.md', () => {
  it('is what the generator writes (run `node infra/generate-configuration-doc.ts` and commit)', () => {
    assert.ok(readFileSync(docPath, 'utf8') === renderConfigurationDoc(), 'docs/reference/configuration.md is stale or edited by hand: describe settings in packages/config/src/setting-docs.ts, run `node infra/generate-configuration-doc.ts` and commit');
  });

  it('every variable in the table is read by a reader or by the stack\'s scripts', () => {
    const byReaders = recordReads();
    const scripts = execFileSync('git', ['grep', '-h', '-o', '-E', '[A-Z][A-Z0-9_]{3,}', '--', 'infra/stack', 'bench', 'packages/config/src', 'services/*/src/main.ts'], { cwd: root, encoding: 'utf8' });
    const inScripts = new Set(scripts.split('\n'));
    const unread = SETTING_DOCS.flatMap((d) => d.names).filter((v) => !byReaders.has(v) && !inScripts.has(v));
    assert.deepEqual(unread, []);
  });

  it('refuses a variable a reader asks for that no row describes', () => {
    assert.throws(() => renderConfigurationDoc({ ingress: (_env, r) => r.int('UNDESCRIBED_MS', 5) }), /not described .*UNDESCRIBED_MS/);
  });

  it('refuses a stated default that is not the reader\'s', () => {
    const docs = [{ names: ['SOME_TIMEOUT_MS'], default: '2000', meaning: 'a timeout' }];
    assert.throws(() => renderConfigurationDoc({ ingress: (_env, r) => r.int('SOME_TIMEOUT_MS', 1000) }, docs), /does not name the readers' default 1000/);
  });

  it('names the users a variable of a row has beyond the others', () => {
    const docs = [{ names: ['A_MS', 'B_MS'], meaning: 'two timeouts' }];
    const text = renderConfigurationDoc({ prober: (_env, r) => [r.int('A_MS', 1), r.int('B_MS', 2)], hubctl: (_env, r) => r.int('B_MS', 2) }, docs);
    assert.match(text, /^\| `A_MS`, `B_MS` \| 1, 2 \| prober \(`B_MS` also hubctl\) \| two timeouts \|$/m);
  });
});
