// The package exports nothing driver-shaped: no exported declaration of src/index.ts (a function's
// parameters and result, an interface's or class's members, a type alias, a constant's type,
// inferred types included) refers to a type declared by pg (its Pool, PoolClient, QueryResult, or
// the types of pg-protocol and pg-types it uses). The services hold the store's opaque Database, so
// only the store runs SQL. Checked with the TypeScript compiler on the index as the other packages
// import it, as packages/event-log/test/driver-free-surface.unit.test.ts checks the Kafka clients.
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const DRIVER = /[\\/]node_modules[\\/](?:\.pnpm[\\/][^\\/]+[\\/]node_modules[\\/])?(?:pg|pg-[^\\/]+|@types[\\/]pg)[\\/]/;

/** Each exported name of the module with the driver types its declared or inferred types reach. */
function driverTypesInExports(entry: string): Map<string, string[]> {
  const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  const program = ts.createProgram([entry], { ...(config?.options ?? {}), noEmit: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(entry);
  assert.ok(source, entry);
  const moduleSymbol = checker.getSymbolAtLocation(source);
  assert.ok(moduleSymbol, 'the index is a module');
  const found = new Map<string, string[]>();
  for (const exported of checker.getExportsOfModule(moduleSymbol)) {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    const hits = new Set<string>();
    const seen = new Set<ts.Type>();
    const fromDriver = (s: ts.Symbol | undefined): boolean => (s?.declarations ?? []).some((d) => DRIVER.test(d.getSourceFile().fileName));
    const fromLibrary = (s: ts.Symbol | undefined): boolean => (s?.declarations ?? []).some((d) => /[\\/]node_modules[\\/]/.test(d.getSourceFile().fileName));
    const visitSignature = (sig: ts.Signature): void => {
      for (const p of sig.getParameters()) visit(checker.getTypeOfSymbol(p));
      visit(checker.getReturnTypeOfSignature(sig));
    };
    const visit = (type: ts.Type): void => {
      if (seen.has(type)) return;
      seen.add(type);
      for (const s of [type.aliasSymbol, type.getSymbol()]) if (fromDriver(s)) hits.add(checker.typeToString(type));
      for (const a of type.aliasTypeArguments ?? []) visit(a);
      if (type.isUnionOrIntersection()) type.types.forEach(visit);
      if (type.flags & ts.TypeFlags.Object && (type as ts.ObjectType).objectFlags & ts.ObjectFlags.Reference) checker.getTypeArguments(type as ts.TypeReference).forEach(visit);
      // Types of the standard library and other packages (Promise, Map, Buffer) are not opened: only their type arguments.
      if (fromLibrary(type.getSymbol()) || /[\\/]typescript[\\/]lib[\\/]/.test(type.getSymbol()?.declarations?.[0]?.getSourceFile().fileName ?? '')) return;
      for (const prop of type.getProperties()) if (!fromLibrary(prop)) visit(checker.getTypeOfSymbol(prop));
      type.getCallSignatures().forEach(visitSignature);
      type.getConstructSignatures().forEach(visitSignature);
      for (const info of checker.getIndexInfosOfType(type)) visit(info.type);
    };
    if (symbol.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Class | ts.SymbolFlags.Enum)) visit(checker.getDeclaredTypeOfSymbol(symbol));
    if (symbol.flags & ts.SymbolFlags.Value) visit(checker.getTypeOfSymbol(symbol));
    if (hits.size > 0) found.set(exported.name, [...hits]);
  }
  return found;
}

describe('@hub/store exports nothing driver-shaped', () => {
  it('no exported declaration refers to a pg type', () => {
    const found = driverTypesInExports(join(root, 'packages', 'store', 'src', 'index.ts'));
    assert.deepEqual(Object.fromEntries(found), {}, 'exports whose types name a pg type');
  });

  it('the check sees a driver type in an export (the internal modules export them)', () => {
    const found = driverTypesInExports(join(root, 'packages', 'store', 'src', 'pg-pool.ts'));
    assert.ok(found.has('pgPool'), `pgPool returns pg's Pool: ${JSON.stringify(Object.fromEntries(found))}`);
  });
});
