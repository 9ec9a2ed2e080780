import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { isOcpiDateTime } from '@hub/ocpi';
import type { Json } from './doc-components.ts';

// Checks real traffic against docs/openapi.json and docs/asyncapi.json (the e2e contract test): a
// response must be documented for its path, method and HTTP status, carry the required headers and
// match the schema; an event must be a message of its topic's channel, its headers and value valid.
// The documents' schemas are JSON Schema 2020-12 (OpenAPI 3.1's dialect; the event schemas are too).

const DOC_BASE = 'https://ocpi-hub.local/docs/';
/** Response headers that belong to the API contract: present without being documented is a violation. */
const CONTRACT_HEADERS = ['x-total-count', 'x-limit', 'link', 'location', 'retry-after'];

const pointer = (...segments: string[]): string => segments.map((s) => `/${s.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');

function newAjv(doc: Json, name: string): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: false, validateSchema: false, multipleOfPrecision: 9 });
  ajv.addFormat('ocpi-date-time', { type: 'string', validate: isOcpiDateTime });
  ajv.addFormat('date-time', { type: 'string', validate: (v: string) => isOcpiDateTime(v) || !Number.isNaN(Date.parse(v)) });
  ajv.addFormat('uri', { type: 'string', validate: (v: string) => URL.canParse(v) });
  ajv.addSchema(doc, DOC_BASE + name);
  return ajv;
}

function compiler(ajv: Ajv2020, name: string): (...path: string[]) => ValidateFunction {
  const cache = new Map<string, ValidateFunction>();
  return (...path) => {
    const ref = `${DOC_BASE}${name}#${pointer(...path)}`;
    let fn = cache.get(ref);
    if (!fn) cache.set(ref, (fn = ajv.compile({ $ref: ref })));
    return fn;
  };
}

const explain = (fn: ValidateFunction): string => (fn.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`).join('; ');

export interface ObservedResponse {
  readonly method: string;
  /** The request path without the query, e.g. /ocpi/2.2.1/locations/NL/ABC/LOC1 */
  readonly path: string;
  readonly status: number;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
}

export interface OpenApiContract {
  /** The template the path matches, e.g. /ocpi/2.2.1/locations/{country_code}/{party_id}/{location_id}. */
  template(path: string): string | undefined;
  /** Everything wrong with the response ([] when it matches the document). */
  check(response: ObservedResponse): string[];
}

export function openApiContract(doc: Json): OpenApiContract {
  const paths = doc['paths'] as Record<string, Record<string, Json>>;
  // Fewer parameters first: a literal segment wins over a parameter.
  const templates = Object.keys(paths)
    .map((t) => ({ t, re: new RegExp(`^${t.replace(/\./g, '\\.').replace(/\{[a-z_]+\}/g, '[^/]+')}$`), params: (t.match(/\{/g) ?? []).length }))
    .sort((a, b) => a.params - b.params);
  const compile = compiler(newAjv(doc, 'openapi.json'), 'openapi.json');
  const { headers: components, responses: responsesOf } = doc['components'] as { headers: Record<string, Json>; responses: Record<string, Json> };
  const template = (path: string): string | undefined => templates.find(({ re }) => re.test(path))?.t;
  return {
    template,
    check({ method, path, status, headers, body }) {
      const t = template(path);
      if (!t) return [`${method} ${path}: no path in the document`];
      const where = `${method} ${t} ${status}`;
      const op = paths[t]?.[method.toLowerCase()];
      // A method the path does not list: the path's x-other-methods answer (405 with Allow).
      if (!op && status !== 405) return [`${method} ${t}: method not in the document, answered ${status}`];
      const response = op ? (op['responses'] as Record<string, Json>)[String(status)] : responsesOf['MethodNotAllowed'];
      if (!response) return [`${where}: HTTP status not documented for this operation`];
      const schemaPath = op ? ['paths', t, method.toLowerCase(), 'responses', String(status)] : ['components', 'responses', 'MethodNotAllowed'];
      const problems: string[] = [];
      const documented = new Set<string>();
      for (const [name, ref] of Object.entries((response['headers'] ?? {}) as Record<string, { $ref: string }>)) {
        const spec = components[ref.$ref.split('/').pop() ?? ''] ?? {};
        documented.add(name.toLowerCase());
        const value = headers[name.toLowerCase()];
        if (value === undefined) {
          if (spec['required'] === true) problems.push(`${where}: header ${name} missing`);
          continue;
        }
        const fn = compile('components', 'headers', ref.$ref.split('/').pop() ?? '', 'schema');
        if (!fn(value)) problems.push(`${where}: header ${name}: ${explain(fn)}`);
      }
      for (const name of CONTRACT_HEADERS) if (headers[name] !== undefined && !documented.has(name)) problems.push(`${where}: header ${name} sent but not documented`);
      const fn = compile(...schemaPath, 'content', 'application/json', 'schema');
      if (!fn(body)) problems.push(`${where}: body: ${explain(fn)}`);
      return problems;
    },
  };
}

export interface ObservedEvent {
  /** The topic without a TOPIC_PREFIX, e.g. ocpi.cdrs.v1 */
  readonly topic: string;
  readonly key: string | null;
  readonly headers: Readonly<Record<string, string>>;
  readonly value: unknown;
}

export interface AsyncApiContract {
  check(event: ObservedEvent): string[];
}

export function asyncApiContract(doc: Json): AsyncApiContract {
  const channels = Object.entries(doc['channels'] as Record<string, { address: string; messages: Record<string, { $ref: string }> }>);
  const messages = (doc['components'] as { messages: Record<string, { name: string }> }).messages;
  const compile = compiler(newAjv(doc, 'asyncapi.json'), 'asyncapi.json');
  return {
    check({ topic, key, headers, value }) {
      const channel = channels.find(([, c]) => c.address === topic);
      if (!channel) return [`${topic}: no channel in the document`];
      const type = headers['ce_type'];
      const message = Object.values(channel[1].messages)
        .map((m) => m.$ref.split('/').pop() ?? '')
        .find((name) => messages[name]?.name === type);
      if (!message) return [`${topic}: ce_type ${type ?? '(none)'} is not a message of this channel`];
      const problems: string[] = [];
      if (typeof key !== 'string' || key.length === 0) problems.push(`${topic} ${type}: no key`);
      const h = compile('components', 'messages', message, 'headers');
      if (!h(headers)) problems.push(`${topic} ${type}: headers: ${explain(h)}`);
      const p = compile('components', 'messages', message, 'payload');
      if (!p(value)) problems.push(`${topic} ${type}: value: ${explain(p)}`);
      return problems;
    },
  };
}
