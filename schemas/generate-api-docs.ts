// Writes docs/openapi.json (partner API) and docs/asyncapi.json (event topics) from the route
// catalogue, the error registry, infra/topics.json and the schemas: the documents are never written
// by hand. schemas/test/api-docs.unit.test.ts fails when the committed files differ from what this
// generates. Run: node schemas/generate-api-docs.ts
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildAsyncApi } from './asyncapi-doc.ts';
import { schemasDir } from './index.ts';
import { buildOpenApi } from './openapi-doc.ts';

export const API_DOCS = {
  'openapi.json': buildOpenApi,
  'asyncapi.json': buildAsyncApi,
} as const;

export const docsDir = join(schemasDir, '..', 'docs');

/** The file's text: two-space JSON with a final newline. */
export function renderApiDoc(name: keyof typeof API_DOCS): string {
  return `${JSON.stringify(API_DOCS[name](), null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const name of Object.keys(API_DOCS) as Array<keyof typeof API_DOCS>) {
    writeFileSync(join(docsDir, name), renderApiDoc(name));
    process.stdout.write(`wrote docs/${name}\n`);
  }
}
