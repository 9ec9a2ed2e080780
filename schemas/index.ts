import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { isOcpiDateTime } from '@hub/ocpi';
import { normalize, pointer } from './normalize.ts';
import { violations } from './violations.ts';

// The JSON Schemas in this folder are the single source of truth for validation (here) and for types
// (generate-types.ts writes schemas/generated/ from the same files).

export const SCHEMA_BASE = 'https://ocpi-hub.local/schemas/';
export const schemasDir = dirname(fileURLToPath(import.meta.url));

export interface SchemaViolation {
  /** JSON Pointer of the offending value, e.g. /roles/0/party_id ("/" for the root) */
  readonly path: string;
  readonly message: string;
  /**
   * For an undocumented member (additionalProperties): its name, the member of the object at `path`.
   * Not enumerable, so a refusal's data shows path and message only.
   */
  readonly member?: string;
}

/**
 * What validation gives back: the violations (empty when valid) and the normalized document, the one
 * to store and forward. For OCPI objects (ocpi/*.json) a member whose value is null is absent in the
 * document (terminology.asciidoc, Cardinality: "?" and "*" fields may be null or omitted with one
 * meaning); in a PATCH (validatePartial) a top-level null of an optional field is kept, meaning
 * "remove this field" (the read models' mergePatch). The document is the input itself when nothing
 * was normalized (no copy on the hot path).
 */
export interface Validation {
  readonly document: unknown;
  readonly violations: readonly SchemaViolation[];
}

export interface SchemaValidator {
  /** Validates data against a schema id relative to SCHEMA_BASE, e.g. "ocpi/credentials.json". */
  validate(schema: string, data: unknown): Validation;
  /**
   * A validator for partial objects (OCPI PATCH): only the root object's own "required" is dropped; every
   * field present (nested objects, array items, other files' schemas) is checked in full. A top-level
   * null is refused for a field the full schema requires and kept (a removal) for any other.
   */
  validatePartial(schema: string, data: unknown): Validation;
  ids(): string[];
}

/** The violations as one short status_message: "pointer: rule; pointer: rule". */
export function describeViolations(violations: readonly SchemaViolation[]): string {
  return violations.map((v) => `${v.path}: ${v.message}`).join('; ');
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

export function loadSchemas(dir: string = schemasDir): Array<{ id: string; file: string; schema: Record<string, unknown> }> {
  return schemaFiles(dir).map((file) => {
    const schema = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    const id = typeof schema['$id'] === 'string' ? schema['$id'] : '';
    if (!id.startsWith(SCHEMA_BASE)) throw new Error(`${relative(dir, file)}: $id must start with ${SCHEMA_BASE}`);
    return { id, file, schema };
  });
}

function newAjv(): Ajv2020 {
  // verbose: errors carry their schema (for x-messages) and value (never echoed); it costs nothing on
  // a valid body.
  // multipleOfPrecision: "at most one digit fraction" (mod_charging_profiles.asciidoc, ChargingProfile
  // class) is multipleOf 0.1, which binary floating point fails for 8.1 without a tolerance.
  const ajv = new Ajv2020({ allErrors: true, strict: true, verbose: true, multipleOfPrecision: 9 });
  ajv.addKeyword('x-ocpi-source');
  // { keyword: message }: how a schema words a refusal of its own rule (violations.ts).
  ajv.addKeyword('x-messages');
  // types.asciidoc, DateTime: UTC, so no offset but an explicit +00:00; a real instant in years 1-9999.
  ajv.addFormat('ocpi-date-time', { type: 'string', validate: isOcpiDateTime });
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
  // The root "required" of each OCPI object: a PATCH may remove (null) any top-level field but these.
  const required = new Map(loaded.map(({ id, schema }) => [id.slice(SCHEMA_BASE.length), new Set(Array.isArray(schema['required']) ? (schema['required'] as string[]) : [])]));
  // terminology.asciidoc, Cardinality: null means absent for OCPI objects (ocpi/ is 2.2.1, ocpi-<version>/
  // another version, e.g. ocpi-2.1.1/); event schemas say null where they mean it.
  const cardinality = (schema: string): boolean => schema.startsWith('ocpi/') || schema.startsWith('ocpi-');
  const run = (fn: ValidateFunction, checked: unknown, sent: unknown, found: readonly SchemaViolation[]): readonly SchemaViolation[] => {
    if (fn(checked)) return found;
    return [...found, ...violations(fn.errors, sent)];
  };
  return {
    validate(schema, data) {
      const fn = get(SCHEMA_BASE, schema);
      const { document, violations: found } = normalize(data, cardinality(schema));
      return { document, violations: run(fn, document, data, found) };
    },
    validatePartial(schema, data) {
      const fn = get(PARTIAL_BASE, schema);
      const { document, violations: found } = normalize(data, cardinality(schema));
      // No copy made: no null anywhere, nothing to keep (the hot PATCH path ends here).
      if (document === data || data === null || typeof data !== 'object' || Array.isArray(data)) return { document, violations: run(fn, document, data, found) };
      // A PATCH replaces the fields it carries (mod_locations.asciidoc, PATCH Method): a top-level null
      // removes an optional field (mergePatch) and is kept in the document; a required field cannot be
      // removed. Nested nulls are absent, as in a PUT.
      const body = data as Record<string, unknown>;
      const normalized = document as Record<string, unknown>;
      const mandatory = required.get(schema);
      const refused: SchemaViolation[] = [];
      const kept: Record<string, unknown> = {};
      for (const key of Object.keys(body)) {
        const removal = body[key] === null;
        if (removal && mandatory?.has(key)) refused.push({ path: pointer([key]), message: `required field ${key} cannot be removed (null)` });
        Object.defineProperty(kept, key, { value: removal ? null : normalized[key], enumerable: true, writable: true, configurable: true });
      }
      return { document: kept, violations: run(fn, document, data, [...found, ...refused]) };
    },
    ids: () => loaded.map((l) => l.id.slice(SCHEMA_BASE.length)),
  };
}
