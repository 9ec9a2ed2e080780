// Comments cite what a reader can open: the interface document and the reference design are in
// docs/explanation/, and a citation names one of their sections; no file names an issue of a tracker
// the reader may not have (ESLint's hub/no-issue-references does the same for comments in code).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tracked = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f.length > 0 && /\.(ts|mjs|js|sql|md|ya?ml|sh|json|properties|xml)$/.test(f) && !/^(pnpm-lock\.yaml|bench\/results\/|patches\/|docs\/(openapi|asyncapi)\.json)/.test(f));
const read = (f: string): string => {
  try {
    return readFileSync(`${root}/${f}`, 'utf8');
  } catch {
    return ''; // deleted in the work tree, not yet in the index
  }
};

/**
 * The sections a citation may name: headings, the numbered items of a list ("10. Onboarding sequence:
 * ...") and paragraphs that open with their subject ("Event envelope: ...").
 */
function sections(doc: string): string[] {
  return doc.split('\n').flatMap((line) => {
    const heading = /^#+\s+(.+)$/.exec(line);
    if (heading) return [heading[1] as string];
    const item = /^\d+\.\s+(.+)$/.exec(line);
    if (item) return [item[1] as string];
    const lead = /^([A-Z][\w ]{2,40}):/.exec(line);
    return lead ? [lead[1] as string] : [];
  });
}

/** The section a citation names: "Onboarding sequence a-e" is "Onboarding sequence" (item numbers and letters after it go). */
function sectionOf(cited: string): string {
  return cited
    .split(/[;,(:]/)[0]!
    .replace(/\s+(\d+|[a-e](-[a-e])?|rule \d+)$/i, '')
    .trim();
}

describe('citations', () => {
  it('no file names an issue number', () => {
    const found = tracked.flatMap((f) => read(f).split('\n').flatMap((line, i) => (/\bissues?\s*#?\d+/i.test(line) ? [`${f}:${i + 1}: ${line.trim().slice(0, 120)}`] : [])));
    assert.deepEqual(found, []);
  });

  for (const [name, doc] of [
    ['interface document', 'docs/explanation/interface-document.md'],
    ['reference design', 'docs/explanation/reference-design.md'],
  ] as const) {
    it(`every "${name}, <section>" in code names a section of ${doc}`, () => {
      const known = sections(read(doc)).map((s) => s.toLowerCase());
      const unknown: string[] = [];
      for (const f of tracked.filter((t) => /\.(ts|mjs|js|sql)$/.test(t))) {
        for (const m of read(f).matchAll(new RegExp(`${name}, ([^\\n)]+)`, 'gi'))) {
          const section = sectionOf(m[1] as string).toLowerCase();
          if (!known.some((k) => k.startsWith(section))) unknown.push(`${f}: "${m[0]}"`);
        }
      }
      assert.deepEqual(unknown, []);
    });
  }

  it('every relative link of the Markdown docs opens a file of the repository', () => {
    const broken: string[] = [];
    for (const f of tracked.filter((t) => t.endsWith('.md') && existsSync(join(root, t)))) {
      for (const m of read(f).matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        const target = m[1] as string;
        if (/^[a-z]+:/i.test(target)) continue;
        if (!existsSync(join(root, dirname(f), target))) broken.push(`${f}: ${target}`);
      }
    }
    assert.deepEqual(broken, []);
  });
});
