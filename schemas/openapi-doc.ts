import { hubErrors, OCPI_SUCCESS, statusCodeIn, type HubErrorKind } from '@hub/ocpi';
import { API_CATALOGUE, type RouteSpec } from '../services/ingress/src/api-catalogue.ts';
import { componentName, componentRef, partialComponent, schemaComponents, type Json } from './doc-components.ts';

// docs/openapi.json (OpenAPI 3.1) from the ingress's route catalogue, the error registry and the
// schemas: paths, methods, parameters, headers, bodies, the OCPI response envelope and the OCPI status
// codes each operation can answer with. Written by schemas/generate-api-docs.ts.

/** Added to every route by the layers around the handlers (authenticate.ts, express.json, http.ts). */
const AUTH_ERRORS: Record<RouteSpec['auth'], readonly HubErrorKind[]> = {
  'hub-token': ['AUTH_MISSING', 'AUTH_UNKNOWN_TOKEN', 'AUTH_INITIAL_TOKEN_SCOPE', 'PARTY_SUSPENDED'],
  'initial-token': ['AUTH_MISSING', 'AUTH_UNKNOWN_TOKEN'],
  none: [],
};
/**
 * Refusals of a request the transport layer cannot read (HTTP 400, 413, 415: unparseable JSON, an
 * oversized body, a bad URL or encoding), read from the registry so a new kind of them is documented
 * for every route at the next generation. Listed for every route: every module reads any body sent
 * (also with GET); the two versions routes read none, so for them only the URL and HTTP refusals apply.
 */
const TRANSPORT_ERRORS = (Object.keys(hubErrors) as HubErrorKind[]).filter((k) => [400, 413, 415].includes(hubErrors[k].http));
const SERVER_ERRORS: readonly HubErrorKind[] = ['UNAVAILABLE', 'INTERNAL'];

const header = (name: string): Json => ({ $ref: `#/components/headers/${name}` });
const param = (name: string): Json => ({ $ref: `#/components/parameters/${name}` });

const PATH_PARAMETERS: Record<string, Json> = {
  country_code: { $ref: componentRef('ocpi/types.json', '/$defs/CountryCode') },
  party_id: { $ref: componentRef('ocpi/types.json', '/$defs/PartyId') },
  command: { type: 'string', description: 'START_SESSION, STOP_SESSION, RESERVE_NOW, CANCEL_RESERVATION or UNLOCK_CONNECTOR (anything else: 2001)' },
  command_id: { type: 'string', description: 'The id the hub gave the command (in the response_url it forwarded)' },
  request_id: { type: 'string', description: 'The id the hub gave the charging profile request (in the response_url it forwarded)' },
  session_id: { type: 'string', maxLength: 36, description: 'CiString(36): a session the hub delivered to the calling eMSP (Receiver interface) or that the calling CPO pushed (Sender interface)' },
};

function errorKinds(route: RouteSpec): HubErrorKind[] {
  // Every authenticated URL under /ocpi/{version} refuses callers not allowed that version.
  const versioned = route.auth !== 'none' && /^\/ocpi\/[0-9]/.test(route.path) ? (['VERSION_NOT_ALLOWED'] as const) : [];
  const kinds = [...TRANSPORT_ERRORS, ...AUTH_ERRORS[route.auth], ...versioned, ...route.errors, ...SERVER_ERRORS];
  return [...new Set(kinds)];
}

function bodySchema(route: RouteSpec): Json | undefined {
  if (!route.body) return undefined;
  const refs = route.body.schemas.map((s) => ({ $ref: route.body?.partial ? `${componentRef(s)}.patch` : componentRef(s) }));
  return refs.length === 1 ? refs[0] : { anyOf: refs };
}

function successEnvelope(route: RouteSpec): Json {
  const data: Json | false = route.data ? (route.data.list ? { type: 'array', items: { $ref: componentRef(route.data.schema) } } : { $ref: componentRef(route.data.schema) }) : false;
  return {
    allOf: [{ $ref: '#/components/schemas/OcpiResponse' }],
    properties: { status_code: { const: OCPI_SUCCESS }, data },
    ...(route.data ? { required: ['data'] } : {}),
  };
}

/** A 2.1.1 partner reads codes of its version (statusCodeIn: no 2004, no 4xxx in 2.1.1). */
const versionOf = (route: RouteSpec): string => (route.path.startsWith('/ocpi/2.1.1') ? '2.1.1' : '2.2.1');

function errorEnvelope(kinds: readonly HubErrorKind[], version: string): Json {
  const codes = [...new Set(kinds.map((k) => statusCodeIn(version, hubErrors[k].ocpi)))].sort();
  return { allOf: [{ $ref: '#/components/schemas/OcpiResponse' }], properties: { status_code: { enum: codes } }, required: ['status_message'] };
}

const describeKinds = (kinds: readonly HubErrorKind[]): string => kinds.map((k) => `${k} (${hubErrors[k].ocpi}): ${hubErrors[k].message}`).join('; ');

function responses(route: RouteSpec): Json {
  const byStatus = new Map<number, HubErrorKind[]>();
  for (const kind of errorKinds(route)) byStatus.set(hubErrors[kind].http, [...(byStatus.get(hubErrors[kind].http) ?? []), kind]);
  const common = { 'X-Request-ID': header('X-Request-ID'), 'X-Correlation-ID': header('X-Correlation-ID'), 'X-Hub-Environment': header('X-Hub-Environment') };
  const okHeaders: Json = { ...common };
  if (route.paginated) Object.assign(okHeaders, { 'X-Total-Count': header('X-Total-Count'), 'X-Limit': header('X-Limit'), Link: header('Link') });
  for (const h of route.responseHeaders ?? []) okHeaders[h] = header(h);
  const refusedAt200 = byStatus.get(200) ?? [];
  const out: Json = {
    '200': {
      description: refusedAt200.length ? `Success (1000), or refused with HTTP 200: ${describeKinds(refusedAt200)}` : 'Success (1000)',
      headers: okHeaders,
      content: { 'application/json': { schema: refusedAt200.length ? { anyOf: [successEnvelope(route), errorEnvelope(refusedAt200, versionOf(route))] } : successEnvelope(route) } },
    },
  };
  for (const [status, kinds] of [...byStatus].sort(([a], [b]) => a - b)) {
    if (status === 200) continue;
    out[String(status)] = {
      description: describeKinds(kinds),
      headers: status === 429 ? { ...common, 'Retry-After': header('Retry-After') } : status === 405 ? { ...common, Allow: kinds.every((k) => k === 'METHOD_NOT_ALLOWED') ? ALLOW_REQUIRED : header('Allow') } : common,
      content: { 'application/json': { schema: errorEnvelope(kinds, versionOf(route)) } },
    };
  }
  return out;
}

function operation(route: RouteSpec): Json {
  const pathParams = [...route.path.matchAll(/\{([a-z_]+)\}/g)].map(([, name = '']) => ({
    name, in: 'path', required: true, schema: PATH_PARAMETERS[name] ?? { type: 'string', maxLength: 36, description: 'CiString(36): compared case-insensitively' },
  }));
  const parameters: Json[] = [...pathParams, param('X-Request-ID'), param('X-Correlation-ID')];
  if (route.paginated) parameters.push(param('offset'), param('limit'), param('date_from'), param('date_to'));
  if (route.tokenType) parameters.push(param('type'));
  for (const q of route.query ?? []) parameters.push(param(q));
  for (const h of route.requestHeaders ?? []) parameters.push(param(`${h}-country-code`), param(`${h}-party-id`));
  const body = bodySchema(route);
  const kinds = errorKinds(route);
  return {
    operationId: `${route.method}${route.path.replace(/\/ocpi\/2\.2\.1/, '').replace(/[{}]/g, '').replace(/[/_.-](\w)/g, (_m, c: string) => c.toUpperCase()) || 'Versions'}`,
    summary: route.summary,
    tags: [route.module],
    security: route.auth === 'none' ? [] : route.auth === 'initial-token' ? [{ hubToken: [] }, { initialToken: [] }] : [{ hubToken: [] }],
    parameters,
    ...(body ? { requestBody: { required: !route.body?.optional, content: { 'application/json': { schema: body } } } } : {}),
    responses: responses(route),
    'x-ocpi-errors': kinds.map((kind) => ({ kind, http: hubErrors[kind].http, status_code: statusCodeIn(versionOf(route), hubErrors[kind].ocpi) })),
  };
}

const stringHeader = (description: string, schema: Json = { type: 'string' }, required = false): Json => ({ description, required, schema });
const partyHeader = (who: string, what: string): Json => ({ name: `OCPI-${who}-${what === 'country' ? 'country-code' : 'party-id'}`, in: 'header', required: false, description: `transport_and_format.asciidoc, Message routing headers: the ${who === 'from' ? 'sending' : 'receiving'} party's ${what === 'country' ? 'country code' : 'party id'}`, schema: { $ref: componentRef('ocpi/types.json', what === 'country' ? '/$defs/CountryCode' : '/$defs/PartyId') } });

/** A method the path does not serve always names the ones it does (RFC 9110 15.5.6); other 405s (credentials already registered) need not. */
const ALLOW_REQUIRED: Json = header('AllowOnMethodNotAllowed');

/** Every known path answers the methods it does not serve with 405 and Allow (RFC 9110 15.5.6). */
const OTHER_METHODS: Json = {
  description: 'Any method this path does not list: HTTP 405 with OCPI 2000 and an Allow header naming the methods it serves',
  $ref: '#/components/responses/MethodNotAllowed',
};

// Long because: most of it is the OpenAPI document's literal (info, servers, security, components).
export function buildOpenApi(): Json {
  const paths: Record<string, Json> = {};
  for (const route of API_CATALOGUE) (paths[route.path] ??= { 'x-other-methods': OTHER_METHODS })[route.method] = operation(route);
  const schemas = schemaComponents((id) => /^ocpi(-[0-9.]+)?\//.test(id));
  for (const id of new Set(API_CATALOGUE.filter((r) => r.body?.partial).flatMap((r) => r.body?.schemas ?? []))) {
    schemas[`${componentName(id)}.patch`] = partialComponent(schemas[componentName(id)] as Json, id);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'OCPI 2.2.1 roaming hub: partner API',
      version: '2.2.1',
      description: 'Generated by schemas/generate-api-docs.ts from services/ingress/src/api-catalogue.ts, packages/ocpi/src/errors.ts and schemas/ocpi. Every answer is an OCPI response envelope (transport_and_format.asciidoc, Response format); errors: docs/reference/errors.md.',
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    servers: [{ url: 'http://127.0.0.1:8080', description: '`npm start` (HUB_PUBLIC_URL in production)' }],
    tags: [...new Set(API_CATALOGUE.map((r) => r.module))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        hubToken: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Token <base64 of the credentials token the hub issued> (transport_and_format.asciidoc, Authorization header)' },
        initialToken: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Token <base64 of the initial token hubctl printed>: versions and credentials only' },
      },
      responses: {
        MethodNotAllowed: {
          description: `${describeKinds(['METHOD_NOT_ALLOWED'])}: a method the path does not serve`,
          headers: { 'X-Request-ID': header('X-Request-ID'), 'X-Correlation-ID': header('X-Correlation-ID'), Allow: ALLOW_REQUIRED },
          content: { 'application/json': { schema: errorEnvelope(['METHOD_NOT_ALLOWED'], '2.2.1') } },
        },
      },
      parameters: {
        'X-Request-ID': { name: 'X-Request-ID', in: 'header', required: false, description: 'Echoed; generated when absent', schema: { type: 'string' } },
        'X-Correlation-ID': { name: 'X-Correlation-ID', in: 'header', required: false, description: 'Echoed; generated when absent', schema: { type: 'string' } },
        offset: { name: 'offset', in: 'query', required: false, schema: { type: 'integer', minimum: 0, default: 0 } },
        limit: { name: 'limit', in: 'query', required: false, description: 'Default 100, at most 1,000; X-Limit answers the limit applied', schema: { type: 'integer', minimum: 0 } },
        date_from: { name: 'date_from', in: 'query', required: false, description: 'Inclusive', schema: { type: 'string', format: 'date-time' } },
        date_to: { name: 'date_to', in: 'query', required: false, description: 'Exclusive', schema: { type: 'string', format: 'date-time' } },
        type: { name: 'type', in: 'query', required: false, description: 'mod_tokens.asciidoc: the token\'s TokenType, RFID when omitted (a uid is unique per type only)', schema: { $ref: componentRef('ocpi/types.json', '/$defs/TokenType') } },
        duration: { name: 'duration', in: 'query', required: true, description: 'mod_charging_profiles.asciidoc, GET: length of the requested ActiveChargingProfile in seconds', schema: { type: 'integer', minimum: 0 } },
        response_url: { name: 'response_url', in: 'query', required: true, description: 'Where the result is POSTed: a host the eMSP registered (or the operator allowed), never a special address', schema: { type: 'string', format: 'uri', maxLength: 255 } },
        'OCPI-from-country-code': partyHeader('from', 'country'),
        'OCPI-from-party-id': partyHeader('from', 'party'),
        'OCPI-to-country-code': partyHeader('to', 'country'),
        'OCPI-to-party-id': partyHeader('to', 'party'),
      },
      headers: {
        'X-Request-ID': stringHeader('The request id (the caller\'s or a generated one)', { type: 'string', minLength: 1 }, true),
        'X-Correlation-ID': stringHeader('The correlation id (the caller\'s or a generated one)', { type: 'string', minLength: 1 }, true),
        'X-Hub-Environment': stringHeader('On every answer of a sandbox hub (npm run sandbox, HUB_SANDBOX=true), refusals included; a production hub sends none (docs/how-to/sandbox.md)', { type: 'string', enum: ['sandbox'] }),
        'X-Total-Count': stringHeader('Number of objects matching the filters (on success, status_code 1000)', { type: 'string', pattern: '^[0-9]+$' }),
        'X-Limit': stringHeader('The page size applied (on success, status_code 1000)', { type: 'string', pattern: '^[0-9]+$' }),
        Link: stringHeader('<url>; rel="next", with the same filters, while more objects exist', { type: 'string', pattern: '^<[^>]+>; rel="next"$' }),
        Location: stringHeader('Where the owning CPO can GET the CDR (mod_cdrs.asciidoc, POST)', { type: 'string', format: 'uri' }),
        Allow: stringHeader('The methods the path serves, e.g. "GET, HEAD, PUT, PATCH"', { type: 'string', pattern: '^[A-Z]+(, [A-Z]+)*$' }),
        AllowOnMethodNotAllowed: stringHeader('The methods the path serves, e.g. "GET, HEAD, PUT, PATCH": always sent with METHOD_NOT_ALLOWED', { type: 'string', pattern: '^[A-Z]+(, [A-Z]+)*$' }, true),
        'Retry-After': stringHeader('Seconds until the rate limit allows the next request', { type: 'string', pattern: '^[0-9]+$' }, true),
      },
      schemas: {
        OcpiResponse: {
          description: 'transport_and_format.asciidoc, Response format',
          type: 'object',
          required: ['status_code', 'timestamp'],
          properties: {
            data: {},
            status_code: { type: 'integer', description: 'status_codes.asciidoc: 1xxx success, 2xxx client, 3xxx server, 4xxx hub errors' },
            status_message: { type: 'string' },
            timestamp: { type: 'string', format: 'date-time', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$' },
          },
        },
        ...schemas,
      },
    },
  };
}
