// Writes schemas/generated/<dir>/<name>.ts from every schema: TypeScript types derived from the same
// JSON Schemas that validate requests, so a type can never drift from what is accepted.
// Cross-file $refs (https://ocpi-hub.local/schemas/...) resolve to the files here, never the network.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { compile } from 'json-schema-to-typescript';
import { loadSchemas, SCHEMA_BASE, schemasDir } from './index.ts';

const outDir = join(schemasDir, 'generated');
const localResolver = {
  order: 1,
  canRead: (file: { url: string }) => file.url.startsWith(SCHEMA_BASE),
  read: (file: { url: string }) => readFileSync(join(schemasDir, file.url.slice(SCHEMA_BASE.length).split('#')[0] ?? ''), 'utf8'),
};

const exports: string[] = [];
for (const { file, schema } of loadSchemas()) {
  const rel = relative(schemasDir, file).replace(/\.json$/, '.ts');
  const ts = await compile(schema, typeof schema['title'] === 'string' ? schema['title'] : rel, {
    bannerComment: `// Generated from schemas/${relative(schemasDir, file)} by schemas/generate-types.ts. Do not edit.`,
    additionalProperties: false,
    declareExternallyReferenced: true,
    unreachableDefinitions: false,
    format: false,
    cwd: dirname(file),
    $refOptions: { resolve: { http: false as never, hub: localResolver } },
  });
  const target = join(outDir, rel);
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, ts);
  exports.push(rel);
}
process.stdout.write(`generated ${exports.length} type modules in ${relative(process.cwd(), outDir)}\n`);
