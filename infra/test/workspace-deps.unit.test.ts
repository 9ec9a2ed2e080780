// Every workspace declares exactly the packages it imports: a dependency nobody
// imports is pruned, and one imported without being declared only resolves by accident of hoisting.
// Imports are the static `from '...'`, side-effect `import '...'` and dynamic `import('...')`
// specifiers of the workspace's source, tests and scripts; the root's devDependencies (the tooling:
// TypeScript, eslint, type packages) count as declared everywhere.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SOURCE = /\.(?:ts|mts|cts|js|mjs|cjs)$/;
const SKIP = new Set(['node_modules', '.local', '.git']);

interface Manifest {
  readonly name: string;
  readonly dependencies?: Record<string, string>;
  readonly devDependencies?: Record<string, string>;
}

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;

/** The workspace directories pnpm-workspace.yaml lists ("dir" or "dir/*"). */
function workspaces(): string[] {
  const globs = [...readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8').matchAll(/^\s*-\s*["']?([^"'\s]+)["']?\s*$/gm)].map((m) => m[1] as string);
  return globs.flatMap((g) =>
    g.endsWith('/*')
      ? readdirSync(join(root, g.slice(0, -2)), { withFileTypes: true })
          .filter((d) => d.isDirectory() && readdirSync(join(root, g.slice(0, -2), d.name)).includes('package.json'))
          .map((d) => join(g.slice(0, -2), d.name))
      : [g],
  );
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    if (SKIP.has(d.name)) return [];
    const path = join(dir, d.name);
    if (d.isDirectory()) return sourceFiles(path);
    return SOURCE.test(d.name) ? [path] : [];
  });
}

/** The package a specifier names ('@scope/name/sub' -> '@scope/name', 'name/sub' -> 'name'), undefined for relative paths and Node's own modules. */
export function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('#') || isBuiltin(specifier)) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

export function importedSpecifiers(text: string): string[] {
  const found: string[] = [];
  for (const re of [/\b(?:import|export)\s[^'"`;]*?\sfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g, /^\s*import\s+['"]([^'"]+)['"]/gm]) {
    for (const m of text.matchAll(re)) found.push(m[1] as string);
  }
  return found;
}

function imports(dir: string): Set<string> {
  const used = new Set<string>();
  for (const file of sourceFiles(dir)) {
    for (const specifier of importedSpecifiers(readFileSync(file, 'utf8'))) {
      const name = packageOf(specifier);
      if (name) used.add(name);
    }
  }
  return used;
}

describe('workspace dependencies', () => {
  it('reads import specifiers of every form', () => {
    // Quotes spliced in, so that this file's own scan does not read these as its imports.
    const q = "'";
    const text = `import a from ${q}pkg-a${q};\nimport {\n  b,\n} from ${q}@scope/b/sub${q};\nimport type { C } from "c";\nexport * from ${q}./local.ts${q};\nimport ${q}side-effect${q};\nconst d = await import(${q}d${q});\nimport { e } from ${q}node:fs${q};`;
    const names = importedSpecifiers(text).map(packageOf).filter((n) => n !== undefined);
    assert.deepEqual(names.sort(), ['@scope/b', 'c', 'd', 'pkg-a', 'side-effect']);
  });

  it('declares what each workspace imports, and nothing else', () => {
    const tooling = new Set(Object.keys(readJson<Manifest>(join(root, 'package.json')).devDependencies ?? {}));
    const problems: string[] = [];
    const list = workspaces();
    assert.ok(list.length > 10, `found only ${list.join(', ')}`);
    for (const ws of list) {
      const manifest = readJson<Manifest>(join(root, ws, 'package.json'));
      const declared = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.devDependencies ?? {})]);
      const used = imports(join(root, ws));
      used.delete(manifest.name);
      const unused = [...declared].filter((d) => !used.has(d) && !(d.startsWith('@types/') && used.has(d.slice('@types/'.length))));
      const undeclared = [...used].filter((u) => !declared.has(u) && !tooling.has(u));
      if (unused.length > 0) problems.push(`${relative(root, join(root, ws))}: declared but never imported: ${unused.sort().join(', ')}`);
      if (undeclared.length > 0) problems.push(`${relative(root, join(root, ws))}: imported but not declared: ${undeclared.sort().join(', ')}`);
    }
    assert.deepEqual(problems, []);
  });
});
