// An adapter package exports nothing driver-shaped: which exported declarations of a module (a
// function's parameters and result, an interface's or class's members, a type alias, a constant's
// type, inferred types included) refer to a type a driver declares. Checked with the TypeScript
// compiler on the module as other packages import it; used by packages/event-log's and
// packages/store's driver-free-surface tests.
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** A path in node_modules of one of `packages` (as pnpm lays them out too): where a driver's types are declared. */
export function driverPaths(packages: string): RegExp {
  return new RegExp(`[\\\\/]node_modules[\\\\/](?:\\.pnpm[\\\\/][^\\\\/]+[\\\\/]node_modules[\\\\/])?(?:${packages})[\\\\/]`);
}

/** Each exported name of the module with the driver types (declared under `driver`) its declared or inferred types reach. */
export function driverTypesInExports(entry: string, driver: RegExp): Map<string, string[]> {
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
    const fromDriver = (s: ts.Symbol | undefined): boolean => (s?.declarations ?? []).some((d) => driver.test(d.getSourceFile().fileName));
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
