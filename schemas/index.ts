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
  /**
   * A validator for partial objects (OCPI PATCH): only the root object's own "required" is dropped; every
   * field present (nested objects, array items, other files' schemas) is checked in full.
   */
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

/** Where the partial (PATCH) variant of each schema is registered; not a SCHEMA_BASE id, so ids() and validate() never see it. */
const PARTIAL_BASE = 'https://ocpi-hub.local/schemas-partial/';

/** Keywords whose value maps names to subschemas (the names themselves are not keywords). */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas']);
/** Keywords whose value is instance data, not a schema: left as is. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples']);

/** Every $ref made absolute against the original schema's $id, so the copy points at the full schemas. */
function absoluteRefs(schema: unknown, base: string): unknown {
  if (Array.isArray(schema)) return schema.map((s) => absoluteRefs(s, base));
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === '$ref' && typeof v === 'string') out[k] = new URL(v, base).href;
    else if (DATA_KEYWORDS.has(k)) out[k] = v;
    else if (SCHEMA_MAPS.has(k) && v !== null && typeof v === 'object') out[k] = Object.fromEntries(Object.entries(v as object).map(([name, sub]) => [name, absoluteRefs(sub, base)]));
    else out[k] = absoluteRefs(v, base);
  }
  return out;
}

/**
 * The PATCH variant of a schema: the root object's own "required" is dropped, nothing else. A PATCH
 * carries any subset of the top-level fields, but each field present replaces the stored value whole
 * (mod_locations.asciidoc, PATCH Method), so nested objects and array items (an EVSE in evses, a
 * connector, coordinates, opening_times) must be complete; and if/then/else, not, anyOf/oneOf/allOf keep
 * their "required", which there is a condition (location.json: publish_allowed_to only when publish is
 * false), not a demand on the PATCH. All $refs, "#/$defs/..." included, go to the unchanged originals.
 */
function partialSchema(schema: Record<string, unknown>, id: string): Record<string, unknown> {
  const { required: _required, $defs: _defs, ...rest } = absoluteRefs(schema, id) as Record<string, unknown>;
  return { ...rest, $id: PARTIAL_BASE + id.slice(SCHEMA_BASE.length) };
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
  // One Ajv: the partial variants sit next to the full schemas and $ref them.
  const ajv = newAjv();
  for (const { id, schema } of loaded) {
    ajv.addSchema(schema);
    ajv.addSchema(partialSchema(schema, id));
  }
  const compiled = new Map<string, ValidateFunction>();
  const get = (base: string, schema: string): ValidateFunction => {
    const key = base + schema;
    let fn = compiled.get(key);
    if (!fn) {
      fn = ajv.getSchema(key);
      if (!fn) throw new Error(`unknown schema ${schema}`);
      compiled.set(key, fn);
    }
    return fn;
  };
  return {
    validate(schema, data) {
      const fn = get(SCHEMA_BASE, schema);
      return fn(data) ? [] : violations(fn.errors);
    },
    validatePartial(schema, data) {
      const fn = get(PARTIAL_BASE, schema);
      return fn(data) ? [] : violations(fn.errors);
    },
    ids: () => loaded.map((l) => l.id.slice(SCHEMA_BASE.length)),
  };
}
