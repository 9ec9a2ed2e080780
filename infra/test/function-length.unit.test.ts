// No function over 60 lines without a reason: a long function is read, reviewed and changed as one
// piece, so one that stays long says why in the comment directly above it (or above the statement
// that holds it, `export const x = ...`), with the marker "Long because" and the reason. The measure
// is the function's whole span, nested functions included: a factory that is long only because of
// the small methods it returns is still long, and its comment says that is why.
// Covered: the production sources (packages/*/src, services/*/src, schemas/*.ts, infra/ without its
// tests); tests, benchmarks and generated types are not held to it.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('../..', import.meta.url));
const MAX_LINES = 60;
const MARKER = /Long because\W*\w/;
const SKIP = new Set(['node_modules', '.local', '.git', 'generated', 'test']);

/**
 * Long functions in files other engineers were changing when this check arrived: each still needs a
 * "Long because" reason (or a split) from the file's owner, and then its entry goes. An entry that no
 * longer matches a long function without a reason fails the test, so the list only shrinks.
 */
const ALLOWLIST: readonly { readonly file: string; readonly name: string }[] = [];

export interface LongFunction {
  readonly file: string;
  readonly line: number;
  readonly name: string;
  readonly lines: number;
  readonly reason: boolean;
}

/** Every function-like node of the source spanning more than MAX_LINES lines, nested ones included. */
export function longFunctions(file: string, text: string): LongFunction[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: LongFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (isFunctionLike(node)) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      if (lines > MAX_LINES) found.push({ file, line: start + 1, name: functionName(node, source), lines, reason: hasReason(node, source) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function isFunctionLike(node: ts.Node): node is ts.FunctionLikeDeclaration {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  );
}

/** The declared name, or the name of the variable, property or call the function is handed to. */
function functionName(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (node.name) return node.name.getText(source);
  let child: ts.Node = node;
  let parent = node.parent;
  while (ts.isParenthesizedExpression(parent) || ts.isAsExpression(parent) || ts.isSatisfiesExpression(parent)) [child, parent] = [parent, parent.parent];
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && parent.initializer === child) return parent.name.getText(source);
  if (ts.isCallExpression(parent)) return `${parent.expression.getText(source)}(callback)`;
  if (ts.isExportAssignment(parent)) return 'default';
  return '(anonymous)';
}

/**
 * Whether a comment directly above the function, or above the node holding it up to its statement
 * (declaration, class member or object property), carries the marker.
 */
function hasReason(node: ts.Node, source: ts.SourceFile): boolean {
  for (let at: ts.Node | undefined = node; at && !ts.isSourceFile(at); at = at.parent) {
    if (commentsDirectlyAbove(at, source).some((c) => MARKER.test(c))) return true;
    if (ts.isStatement(at) || ts.isClassElement(at) || ts.isObjectLiteralElement(at)) break;
  }
  return false;
}

/** The comments before the node with no blank line between them and it. */
function commentsDirectlyAbove(node: ts.Node, source: ts.SourceFile): string[] {
  const text = source.getFullText();
  const ranges = ts.getLeadingCommentRanges(text, node.getFullStart()) ?? [];
  const above: string[] = [];
  let next = node.getStart(source);
  for (const range of [...ranges].reverse()) {
    if (/\n[ \t]*\r?\n/.test(text.slice(range.end, next))) break;
    above.unshift(text.slice(range.pos, range.end));
    next = range.pos;
  }
  return above;
}

/** The production sources the rule covers, relative to the repository root. */
function coveredFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((d) => {
      if (SKIP.has(d.name)) return [];
      const path = join(dir, d.name);
      if (d.isDirectory()) return walk(path);
      return d.name.endsWith('.ts') && !d.name.endsWith('.d.ts') ? [path] : [];
    });
  const srcOf = (group: string) =>
    readdirSync(join(root, group), { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(join(root, group, d.name, 'src')))
      .flatMap((d) => walk(join(group, d.name, 'src')));
  const schemas = readdirSync(join(root, 'schemas')).filter((f) => f.endsWith('.ts')).map((f) => join('schemas', f));
  return [...srcOf('packages'), ...srcOf('services'), ...schemas, ...walk('infra')].sort();
}

const seventyLines = (comment: string) =>
  `const start = 0;\n\n${comment}export const build = (n: number) => {\n${'  n += 1;\n'.repeat(68)}  return n;\n};\n`;

describe('function length', () => {
  it('the scanner reports a 70-line function without a reason, and not once its comment gives one', () => {
    const bare = longFunctions('synthetic.ts', seventyLines(''));
    assert.deepEqual(bare.map((f) => [f.name, f.line, f.lines, f.reason]), [['build', 3, 71, false]]);
    const explained = longFunctions('synthetic.ts', seventyLines('// Long because: one straight-line recipe, read top to bottom.\n'));
    assert.deepEqual(explained.map((f) => f.reason), [true]);
    // A comment separated by a blank line is not directly above; a 60-line function is not long.
    assert.deepEqual(longFunctions('synthetic.ts', seventyLines('// Long because: detached.\n\n')).map((f) => f.reason), [false]);
    assert.deepEqual(longFunctions('synthetic.ts', `function ok() {\n${'  1;\n'.repeat(58)}}\n`), []);
  });

  it('the scanner counts nested functions in their parent, and a method by its own comment', () => {
    const text = `export function outer() {\n  return {\n    // Long because: a test of the marker on a method.\n    inner() {\n${'      1;\n'.repeat(60)}    },\n  };\n}\n`;
    assert.deepEqual(longFunctions('synthetic.ts', text).map((f) => [f.name, f.reason]), [['outer', false], ['inner', true]]);
  });

  it(`no function in the production sources spans more than ${MAX_LINES} lines without a "Long because" reason`, () => {
    const files = coveredFiles();
    assert.ok(files.length > 100, `expected the production sources, found ${files.length} files`);
    const unexplained = files.flatMap((file) => longFunctions(file, readFileSync(join(root, file), 'utf8'))).filter((f) => !f.reason);
    const allowed = (f: LongFunction) => ALLOWLIST.some((a) => a.file === f.file && a.name === f.name);
    const offending = unexplained.filter((f) => !allowed(f)).map((f) => `${f.file}:${f.line} ${f.name} ${f.lines} lines`);
    assert.deepEqual(offending, [], `split these functions, or say above each why it is long ("Long because ..."):\n${offending.join('\n')}`);
    const stale = ALLOWLIST.filter((a) => !unexplained.some((f) => f.file === a.file && f.name === a.name)).map((a) => `${a.file} ${a.name}`);
    assert.deepEqual(stale, [], `these allowlist entries are no longer long without a reason: remove them:\n${stale.join('\n')}`);
  });
});
