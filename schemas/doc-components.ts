import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSchemas, SCHEMA_BASE, schemasDir } from './index.ts';

// The schemas of this folder as components of docs/openapi.json and docs/asyncapi.json: each file once
// under components/schemas, its $refs (absolute $ids, relative files and "#/$defs/...") rewritten to
// "#/components/schemas/<name>...", and $id/$schema dropped (the document is the resource). Nothing
// is written by hand: a field added to a schema appears in both documents at the next generation.

export type Json = Record<string, unknown>;

/** Keywords whose value maps names to subschemas (the names themselves are not keywords). */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas']);
/** Keywords whose value is instance data, not a schema. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples']);

/** Component name of a schema id relative to SCHEMA_BASE: ocpi/location.json -> ocpi.location */
export function componentName(schemaId: string): string {
  return schemaId.replace(/\.json$/, '').replace(/\//g, '.');
}

export function componentRef(schemaId: string, fragment = ''): string {
  return `#/components/schemas/${componentName(schemaId)}${fragment}`;
}

function rewriteRefs(schema: unknown, base: string): unknown {
  if (Array.isArray(schema)) return schema.map((s) => rewriteRefs(s, base));
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === '$id' || k === '$schema') continue;
    if (k === '$ref' && typeof v === 'string') {
      const target = new URL(v, base).href;
      if (!target.startsWith(SCHEMA_BASE)) throw new Error(`${base}: $ref ${v} leaves ${SCHEMA_BASE}`);
      const [file = '', fragment] = target.slice(SCHEMA_BASE.length).split('#');
      out[k] = componentRef(file, fragment ?? '');
    } else if (DATA_KEYWORDS.has(k)) out[k] = v;
    else if (SCHEMA_MAPS.has(k) && v !== null && typeof v === 'object') out[k] = Object.fromEntries(Object.entries(v as Json).map(([name, sub]) => [name, rewriteRefs(sub, base)]));
    else out[k] = rewriteRefs(v, base);
  }
  return out;
}

/** Every schema whose id (relative to SCHEMA_BASE) passes the filter, sorted by component name. */
export function schemaComponents(include: (schemaId: string) => boolean): Record<string, Json> {
  const out: Record<string, Json> = {};
  const loaded = loadSchemas().map((s) => ({ ...s, rel: s.id.slice(SCHEMA_BASE.length) }));
  for (const { id, rel, schema } of loaded.sort((a, b) => a.rel.localeCompare(b.rel))) {
    if (include(rel)) out[componentName(rel)] = rewriteRefs(schema, id) as Json;
  }
  return out;
}

/**
 * The PATCH variant of an OCPI object, derived like schemas/index.ts partialSchema: the root's own
 * "required" becomes ["last_updated"] (mod_locations.asciidoc, PATCH Method); its $refs already point
 * at the full component (and its $defs).
 */
export function partialComponent(full: Json, schemaId: string): Json {
  const { required: _required, $defs: _defs, ...rest } = full;
  return { ...rest, title: `${text(full['title'], componentName(schemaId))} (PATCH)`, required: ['last_updated'] };
}

/** A schema annotation as text (the fallback when it is absent or not a string). */
export const text = (value: unknown, fallback: string): string => (typeof value === 'string' ? value : fallback);

export function readJson(...path: string[]): Json {
  return JSON.parse(readFileSync(join(schemasDir, ...path), 'utf8')) as Json;
}
