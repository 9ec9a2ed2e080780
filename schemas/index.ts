import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';

// The JSON Schemas in this folder are the single source of truth for validation (here) and for types
// (generate-types.ts writes schemas/generated/ from the same files).

export const SCHEMA_BASE = 'https://ocpi-hub.local/schemas/';
export const schemasDir = dirname(fileURLToPath(import.meta.url));

export interface SchemaViolation {
  /** JSON Pointer of the offending value, e.g. /roles/0/party_id */
  readonly path: string;
  readonly message: string;
}

export interface SchemaValidator {
  /** Validates data against a schema id relative to SCHEMA_BASE, e.g. "ocpi/credentials.json". */
  validate(schema: string, data: unknown): readonly SchemaViolation[];
  /** A validator for partial objects (OCPI PATCH): the same schema with every "required" removed. */
  validatePartial(schema: string, data: unknown): readonly SchemaViolation[];
  ids(): string[];
}

function schemaFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (name === 'generated' || name === 'node_modules') continue;
    if (statSync(full).isDirectory()) out.push(...schemaFiles(full));
    else if (name.endsWith('.json') && name !== 'package.json') out.push(full);
  }
  return out;
}

function withoutRequired(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutRequired);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'required' && Array.isArray(v)) continue;
    out[k] = k === 'properties' || k === '$defs' ? Object.fromEntries(Object.entries(v as object).map(([pk, pv]) => [pk, withoutRequired(pv)])) : withoutRequired(v);
  }
  return out;
}

function violations(errors: ErrorObject[] | null | undefined): SchemaViolation[] {
  return (errors ?? []).map((e) => {
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'additionalProperties') message = `unknown field "${String((e.params as { additionalProperty: string }).additionalProperty)}"`;
    if (e.keyword === 'required') message = `missing required field "${String((e.params as { missingProperty: string }).missingProperty)}"`;
    if (e.keyword === 'enum') message = `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
    return { path: e.instancePath || '/', message };
  });
}

export function loadSchemas(dir: string = schemasDir): Array<{ id: string; file: string; schema: Record<string, unknown> }> {
  return schemaFiles(dir).map((file) => {
    const schema = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    const id = typeof schema['$id'] === 'string' ? schema['$id'] : '';
    if (!id.startsWith(SCHEMA_BASE)) throw new Error(`${relative(dir, file)}: $id must start with ${SCHEMA_BASE}`);
    return { id, file, schema };
  });
}

function newAjv(): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  ajv.addKeyword('x-ocpi-source');
  return ajv;
}

export function createSchemaValidator(dir: string = schemasDir): SchemaValidator {
  const loaded = loadSchemas(dir);
  const ajv = newAjv();
  const partialAjv = newAjv();
  for (const { schema } of loaded) {
    ajv.addSchema(schema);
    partialAjv.addSchema(withoutRequired(schema) as object);
  }
  const compiled = new Map<string, ValidateFunction>();
  const get = (which: Ajv2020, prefix: string, schema: string): ValidateFunction => {
    const key = prefix + schema;
    let fn = compiled.get(key);
    if (!fn) {
      fn = which.getSchema(SCHEMA_BASE + schema);
      if (!fn) throw new Error(`unknown schema ${schema}`);
      compiled.set(key, fn);
    }
    return fn;
  };
  return {
    validate(schema, data) {
      const fn = get(ajv, 'full:', schema);
      return fn(data) ? [] : violations(fn.errors);
    },
    validatePartial(schema, data) {
      const fn = get(partialAjv, 'partial:', schema);
      return fn(data) ? [] : violations(fn.errors);
    },
    ids: () => loaded.map((l) => l.id.slice(SCHEMA_BASE.length)),
  };
}
