import type { HubErrorKind } from '@hub/ocpi';

// The partner API's routes, declared once for the documents (schemas/generate-api-docs.ts writes
// docs/openapi.json from this list and the schemas). The routes themselves live in app.ts and
// routes/; test/api-catalogue.unit.test.ts walks the express app and fails when a route is missing
// here or listed here without being served. Paths use OCPI's parameter names (the module chapters'
// Receiver/Sender interface sections); schema ids are relative to schemas/. A method a module refuses
// on purpose with its own handler (DELETE of a location) is listed with METHOD_NOT_ALLOWED; the
// catch-all 405 for every other method of a known path is documented once per path by the generator.

export type RouteAuth = 'hub-token' | 'initial-token' | 'none';
export type RouteMethod = 'get' | 'put' | 'patch' | 'post' | 'delete';
/** Request headers a route reads beyond Authorization, X-Request-ID and X-Correlation-ID. */
export type RouteHeader = 'OCPI-from' | 'OCPI-to';

export interface RouteSpec {
  readonly method: RouteMethod;
  /** Path template with OCPI parameter names, e.g. /ocpi/2.2.1/tariffs/{country_code}/{party_id}/{tariff_id} */
  readonly path: string;
  /** The OCPI module (the document's tag). */
  readonly module: string;
  readonly summary: string;
  readonly auth: RouteAuth;
  /** Request body: any of these schemas; partial = an OCPI PATCH (any subset, last_updated required). */
  readonly body?: { readonly schemas: readonly string[]; readonly partial?: boolean; readonly optional?: boolean };
  /** The envelope's data on success; list = an array of the schema; absent = no data. */
  readonly data?: { readonly schema: string; readonly list?: boolean };
  /** offset/limit/date_from/date_to and X-Total-Count, X-Limit, Link (transport_and_format.asciidoc, Pagination). */
  readonly paginated?: boolean;
  readonly requestHeaders?: readonly RouteHeader[];
  /** ?type= (mod_tokens.asciidoc, TokenType; RFID when omitted). */
  readonly tokenType?: boolean;
  /** Required query parameters (mod_charging_profiles.asciidoc, GET and DELETE: "all parameters are added to the URL"). */
  readonly query?: readonly ('duration' | 'response_url')[];
  /** Response headers on success beyond the ones every answer carries. */
  readonly responseHeaders?: readonly 'Location'[];
  /** Error kinds (packages/ocpi/src/errors.ts) the handler itself answers with; authentication, body parsing and INTERNAL/UNAVAILABLE are added by the generator. */
  readonly errors: readonly HubErrorKind[];
}

const V = '/ocpi/2.2.1';
const V211 = '/ocpi/2.1.1';
const V230 = '/ocpi/2.3.0';
const LOC = `${V}/locations/{country_code}/{party_id}/{location_id}`;
const TARIFF = `${V}/tariffs/{country_code}/{party_id}/{tariff_id}`;
const SESSION = `${V}/sessions/{country_code}/{party_id}/{session_id}`;
const TOKEN = `${V}/tokens/{country_code}/{party_id}/{token_uid}`;
const PUSH_ERRORS: readonly HubErrorKind[] = ['INVALID_PARAMETERS', 'FOREIGN_PARTY'];
const LIST_ERRORS: readonly HubErrorKind[] = ['INVALID_PARAMETERS', 'RATE_LIMITED'];
const CREDENTIALS_LINK_ERRORS: readonly HubErrorKind[] = ['INVALID_PARAMETERS', 'PARTNER_API_UNUSABLE', 'UNSUPPORTED_VERSION', 'NO_MATCHING_ENDPOINTS'];

const LOCATION_LEVELS = [
  { path: LOC, schema: 'ocpi/location.json', what: 'Location' },
  { path: `${LOC}/{evse_uid}`, schema: 'ocpi/evse.json', what: 'EVSE' },
  { path: `${LOC}/{evse_uid}/{connector_id}`, schema: 'ocpi/connector.json', what: 'Connector' },
] as const;

const ROUTES_221: readonly RouteSpec[] = [
  { method: 'get', path: '/ocpi/versions', module: 'versions', summary: 'The versions the operator allowed the caller (2.2.1 unless registered with others: 2.1.1, 2.3.0)', auth: 'initial-token', data: { schema: 'ocpi/version.json', list: true }, errors: [] },
  { method: 'get', path: V, module: 'versions', summary: 'The modules the hub serves, once per role', auth: 'initial-token', data: { schema: 'ocpi/version_details.json' }, errors: [] },

  { method: 'get', path: `${V}/credentials`, module: 'credentials', summary: "The hub's credentials for this token", auth: 'initial-token', data: { schema: 'ocpi/credentials.json' }, errors: [] },
  { method: 'post', path: `${V}/credentials`, module: 'credentials', summary: 'Register with the initial token (once)', auth: 'initial-token', body: { schemas: ['ocpi/credentials.json'] }, data: { schema: 'ocpi/credentials.json' }, errors: [...CREDENTIALS_LINK_ERRORS, 'ALREADY_REGISTERED'] },
  { method: 'put', path: `${V}/credentials`, module: 'credentials', summary: 'Update the registration', auth: 'initial-token', body: { schemas: ['ocpi/credentials.json'] }, data: { schema: 'ocpi/credentials.json' }, errors: [...CREDENTIALS_LINK_ERRORS, 'NOT_REGISTERED'] },
  { method: 'delete', path: `${V}/credentials`, module: 'credentials', summary: 'Unregister', auth: 'initial-token', errors: ['NOT_REGISTERED'] },

  // OCPI 2.1.1 partners (docs/reference/version-mapping.md): the same flows in 2.1.1 objects.
  { method: 'get', path: V211, module: 'versions', summary: 'The modules the hub serves to 2.1.1 partners (no roles in 2.1.1)', auth: 'initial-token', data: { schema: 'ocpi-2.1.1/version_details.json' }, errors: [] },
  { method: 'get', path: `${V211}/credentials`, module: 'credentials', summary: "The hub's 2.1.1 credentials for this token", auth: 'initial-token', data: { schema: 'ocpi-2.1.1/credentials.json' }, errors: [] },
  { method: 'post', path: `${V211}/credentials`, module: 'credentials', summary: 'Register in OCPI 2.1.1 with the initial token (once)', auth: 'initial-token', body: { schemas: ['ocpi-2.1.1/credentials.json'] }, data: { schema: 'ocpi-2.1.1/credentials.json' }, errors: [...CREDENTIALS_LINK_ERRORS, 'ALREADY_REGISTERED'] },
  { method: 'put', path: `${V211}/credentials`, module: 'credentials', summary: 'Update the registration, or switch to 2.1.1', auth: 'initial-token', body: { schemas: ['ocpi-2.1.1/credentials.json'] }, data: { schema: 'ocpi-2.1.1/credentials.json' }, errors: [...CREDENTIALS_LINK_ERRORS, 'NOT_REGISTERED'] },
  { method: 'delete', path: `${V211}/credentials`, module: 'credentials', summary: 'Unregister', auth: 'initial-token', errors: ['NOT_REGISTERED'] },

  // OCPI 2.3.0 partners (docs/decisions/0012-ocpi-2.3.0-through-the-2.2.1-canonical-form.md): the modules served in 2.3.0 so far.
  { method: 'get', path: V230, module: 'versions', summary: 'The modules the hub serves to 2.3.0 partners, once per role', auth: 'initial-token', data: { schema: 'ocpi-2.3.0/version_details.json' }, errors: [] },
  { method: 'get', path: `${V230}/credentials`, module: 'credentials', summary: "The hub's 2.3.0 credentials for this token: hub_party_id and the parties routed to the caller", auth: 'initial-token', data: { schema: 'ocpi-2.3.0/credentials.json' }, errors: [] },
  { method: 'post', path: `${V230}/credentials`, module: 'credentials', summary: 'Register in OCPI 2.3.0 with the initial token (once)', auth: 'initial-token', body: { schemas: ['ocpi-2.3.0/credentials.json'] }, data: { schema: 'ocpi-2.3.0/credentials.json' }, errors: [...CREDENTIALS_LINK_ERRORS, 'ALREADY_REGISTERED'] },
  { method: 'put', path: `${V230}/credentials`, module: 'credentials', summary: 'Update the registration, or switch to 2.3.0', auth: 'initial-token', body: { schemas: ['ocpi-2.3.0/credentials.json'] }, data: { schema: 'ocpi-2.3.0/credentials.json' }, errors: [...CREDENTIALS_LINK_ERRORS, 'NOT_REGISTERED'] },
  { method: 'delete', path: `${V230}/credentials`, module: 'credentials', summary: 'Unregister', auth: 'initial-token', errors: ['NOT_REGISTERED'] },

  { method: 'get', path: `${V}/hubclientinfo`, module: 'hubclientinfo', summary: "The caller's parties and those it has an active routing rule with", auth: 'hub-token', data: { schema: 'ocpi/client_info.json', list: true }, paginated: true, errors: ['INVALID_PARAMETERS'] },

  { method: 'get', path: `${V}/locations`, module: 'locations', summary: 'eMSP pull of the locations of routed CPOs', auth: 'hub-token', data: { schema: 'ocpi/location.json', list: true }, paginated: true, requestHeaders: ['OCPI-from'], errors: LIST_ERRORS },
  ...LOCATION_LEVELS.flatMap(({ path, schema, what }): RouteSpec[] => [
    { method: 'get', path, module: 'locations', summary: `${what} detail for routed eMSPs and the owning CPO`, auth: 'hub-token', data: { schema }, errors: ['INVALID_PARAMETERS', 'UNKNOWN_LOCATION'] },
    { method: 'put', path, module: 'locations', summary: `CPO push of a full ${what}`, auth: 'hub-token', body: { schemas: [schema] }, errors: [...PUSH_ERRORS, 'UNKNOWN_LOCATION_PUSH'] },
    { method: 'patch', path, module: 'locations', summary: `CPO update of a ${what} (last_updated required)`, auth: 'hub-token', body: { schemas: [schema], partial: true }, errors: [...PUSH_ERRORS, 'UNKNOWN_LOCATION_PUSH'] },
    { method: 'delete', path, module: 'locations', summary: 'Not supported: PATCH the EVSE status to REMOVED (mod_locations.asciidoc)', auth: 'hub-token', errors: ['METHOD_NOT_ALLOWED'] },
  ]),

  { method: 'get', path: `${V}/tariffs`, module: 'tariffs', summary: 'eMSP pull of the tariffs of routed CPOs', auth: 'hub-token', data: { schema: 'ocpi/tariff.json', list: true }, paginated: true, requestHeaders: ['OCPI-from'], errors: LIST_ERRORS },
  { method: 'get', path: TARIFF, module: 'tariffs', summary: 'Tariff detail for routed eMSPs and the owning CPO', auth: 'hub-token', data: { schema: 'ocpi/tariff.json' }, errors: ['INVALID_PARAMETERS', 'UNKNOWN_TARIFF'] },
  { method: 'put', path: TARIFF, module: 'tariffs', summary: 'CPO push of a full Tariff', auth: 'hub-token', body: { schemas: ['ocpi/tariff.json'] }, errors: PUSH_ERRORS },
  { method: 'delete', path: TARIFF, module: 'tariffs', summary: 'CPO removes a tariff it no longer uses', auth: 'hub-token', errors: [...PUSH_ERRORS, 'UNKNOWN_TARIFF'] },
  { method: 'patch', path: TARIFF, module: 'tariffs', summary: 'Not supported: push the full tariff with PUT', auth: 'hub-token', errors: ['METHOD_NOT_ALLOWED'] },

  { method: 'put', path: SESSION, module: 'sessions', summary: 'CPO push of a full Session', auth: 'hub-token', body: { schemas: ['ocpi/session.json'] }, errors: PUSH_ERRORS },
  { method: 'patch', path: SESSION, module: 'sessions', summary: 'CPO update of a Session the hub holds (last_updated required)', auth: 'hub-token', body: { schemas: ['ocpi/session.json'], partial: true }, errors: [...PUSH_ERRORS, 'UNKNOWN_SESSION'] },

  { method: 'post', path: `${V}/cdrs`, module: 'cdrs', summary: 'CPO push of a CDR (owner from the body)', auth: 'hub-token', body: { schemas: ['ocpi/cdr.json'] }, responseHeaders: ['Location'], errors: PUSH_ERRORS },
  { method: 'get', path: `${V}/cdrs/{country_code}/{party_id}/{cdr_id}`, module: 'cdrs', summary: 'The owning CPO reads the CDR the hub holds', auth: 'hub-token', data: { schema: 'ocpi/cdr.json' }, errors: [...PUSH_ERRORS, 'NOT_FOUND'] },

  { method: 'get', path: `${V}/tokens`, module: 'tokens', summary: 'CPO pull of the tokens of routed eMSPs', auth: 'hub-token', data: { schema: 'ocpi/token.json', list: true }, paginated: true, requestHeaders: ['OCPI-from'], errors: LIST_ERRORS },
  { method: 'get', path: TOKEN, module: 'tokens', summary: 'Token detail (?type=, default RFID) for the owning eMSP and routed CPOs', auth: 'hub-token', data: { schema: 'ocpi/token.json' }, errors: ['INVALID_PARAMETERS', 'UNKNOWN_TOKEN'] },
  { method: 'put', path: TOKEN, module: 'tokens', summary: 'eMSP push of a full Token (?type=, default RFID), delivered to routed CPOs or the one OCPI-to names', auth: 'hub-token', body: { schemas: ['ocpi/token.json'] }, requestHeaders: ['OCPI-to'], errors: [...PUSH_ERRORS, 'UNKNOWN_RECEIVER'] },
  { method: 'patch', path: TOKEN, module: 'tokens', summary: 'eMSP update of a Token the hub holds (?type=, default RFID; last_updated required)', auth: 'hub-token', body: { schemas: ['ocpi/token.json'], partial: true }, requestHeaders: ['OCPI-to'], errors: [...PUSH_ERRORS, 'UNKNOWN_RECEIVER', 'UNKNOWN_TOKEN'] },
  { method: 'delete', path: TOKEN, module: 'tokens', summary: 'Not supported: PUT or PATCH the token with valid false (mod_tokens.asciidoc)', auth: 'hub-token', errors: ['METHOD_NOT_ALLOWED'] },
  {
    method: 'put', path: `${V}/tokens/{country_code}/{party_id}/{token_uid}/authorize`, module: 'tokens', summary: 'eMSP real-time authorization, forwarded to the CPO', auth: 'hub-token',
    body: { schemas: ['ocpi/location_references.json'], optional: true }, data: { schema: 'ocpi/authorization_info.json' }, requestHeaders: ['OCPI-to'],
    errors: ['INVALID_PARAMETERS', 'FOREIGN_PARTY', 'RATE_LIMITED', 'NOT_ENOUGH_INFORMATION', 'UNKNOWN_LOCATION_PUSH', 'UNKNOWN_RECEIVER', 'FORWARD_TIMEOUT', 'RECEIVER_NOT_CONNECTED', 'FORWARD_FAILED'],
  },
  {
    method: 'post', path: `${V}/tokens/{token_uid}/authorize`, module: 'tokens', summary: "CPO real-time authorization, forwarded to the token's eMSP (OCPI-to, else the eMSP that pushed the token)", auth: 'hub-token',
    body: { schemas: ['ocpi/location_references.json'], optional: true }, data: { schema: 'ocpi/authorization_info.json' }, requestHeaders: ['OCPI-from', 'OCPI-to'], tokenType: true,
    errors: ['INVALID_PARAMETERS', 'FOREIGN_PARTY', 'RATE_LIMITED', 'NOT_ENOUGH_INFORMATION', 'UNKNOWN_TOKEN_AUTHORIZE', 'UNKNOWN_RECEIVER', 'FORWARD_TIMEOUT', 'RECEIVER_NOT_CONNECTED', 'FORWARD_FAILED'],
  },
  {
    method: 'post', path: `${V}/commands/{command}`, module: 'commands', summary: 'eMSP command, forwarded to the CPO', auth: 'hub-token',
    body: { schemas: ['ocpi/start_session.json', 'ocpi/stop_session.json', 'ocpi/reserve_now.json', 'ocpi/cancel_reservation.json', 'ocpi/unlock_connector.json'] }, data: { schema: 'ocpi/command_response.json' }, requestHeaders: ['OCPI-from', 'OCPI-to'],
    errors: ['INVALID_PARAMETERS', 'FOREIGN_PARTY', 'RATE_LIMITED', 'NOT_ENOUGH_INFORMATION', 'NOT_FOUND'],
  },
  ...(['put', 'get', 'delete'] as const).map(
    (method): RouteSpec => ({
      method,
      path: `${V}/chargingprofiles/{session_id}`,
      module: 'chargingprofiles',
      summary:
        method === 'put'
          ? "eMSP SetChargingProfile on a session the hub delivered to it, forwarded to the session's CPO"
          : method === 'get'
            ? "eMSP request for the ActiveChargingProfile (?duration=&response_url=), forwarded to the session's CPO"
            : "eMSP clears its ChargingProfile (?response_url=), forwarded to the session's CPO",
      auth: 'hub-token',
      ...(method === 'put' ? { body: { schemas: ['ocpi/set_charging_profile.json'] } } : { query: method === 'get' ? (['duration', 'response_url'] as const) : (['response_url'] as const) }),
      data: { schema: 'ocpi/charging_profile_response.json' },
      requestHeaders: ['OCPI-from', 'OCPI-to'],
      errors: ['INVALID_PARAMETERS', 'FOREIGN_PARTY', 'RATE_LIMITED', 'NOT_ENOUGH_INFORMATION', 'UNKNOWN_SESSION'],
    }),
  ),
  {
    method: 'put', path: `${V}/chargingprofiles/sender/{session_id}`, module: 'chargingprofiles', summary: "CPO push of an updated ActiveChargingProfile, delivered to the session's eMSP", auth: 'hub-token',
    body: { schemas: ['ocpi/active_charging_profile.json'] }, requestHeaders: ['OCPI-from', 'OCPI-to'], errors: ['INVALID_PARAMETERS', 'FOREIGN_PARTY', 'UNKNOWN_SESSION'],
  },
  { method: 'post', path: `${V}/chargingprofiles/callback/{request_id}`, module: 'chargingprofiles', summary: "The CPO's ActiveChargingProfileResult, ChargingProfileResult or ClearProfileResult for a request the hub forwarded", auth: 'none', body: { schemas: ['ocpi/charging_profile_result.json'] }, errors: ['INVALID_PARAMETERS', 'NOT_FOUND'] },
  { method: 'post', path: `${V}/commands/callback/{command_id}`, module: 'commands', summary: "The CPO's CommandResult for a command the hub forwarded", auth: 'none', body: { schemas: ['ocpi/command_result.json'] }, errors: ['INVALID_PARAMETERS', 'NOT_FOUND'] },
];

/** The OCPI 2.1.1 form of a 2.2.1 route served through the same handler (docs/reference/version-mapping.md). */
function in211(route: RouteSpec): RouteSpec {
  // A 2.1.1 CPO posts a CommandResponse as its result, and 2.1.1 has no CANCEL_RESERVATION (mod_commands.md, 2.1.1).
  const schema = (id: string) => (id === 'ocpi/command_result.json' ? 'ocpi-2.1.1/command_response.json' : id.replace(/^ocpi\//, 'ocpi-2.1.1/'));
  const in211Only = (ids: readonly string[]) => ids.filter((id) => id !== 'ocpi/cancel_reservation.json').map(schema);
  return {
    ...route,
    path: route.path.replace(V, V211),
    summary: `${route.summary} (OCPI 2.1.1 objects)`,
    // 2.1.1 has no routing headers (transport_and_format.md, 2.1.1).
    requestHeaders: [],
    ...(route.body ? { body: { ...route.body, schemas: in211Only(route.body.schemas) } } : {}),
    ...(route.data ? { data: { ...route.data, schema: schema(route.data.schema) } } : {}),
  };
}

/** The modules 2.1.1 partners use through the 2.2.1 routes, translated at the edge. */
const SERVED_IN_211 = ['locations', 'tariffs', 'sessions', 'cdrs', 'tokens', 'commands'];

/** mod_tokens.md (2.1.1): an eMSP asks no real-time authorization in 2.1.1 (only the CPO does). */
const notIn211 = (r: RouteSpec) => r.method === 'put' && r.path.endsWith('/authorize');

/** mod_locations.md 2.1.2 (2.1.1, CPO interface): an eMSP reads a Location or EVSE by its ids alone. */
const ONLY_211: readonly RouteSpec[] = [
  { method: 'get', path: `${V211}/locations/{location_id}`, module: 'locations', summary: 'eMSP read of one Location of a routed CPO by its id (OCPI 2.1.1 objects)', auth: 'hub-token', data: { schema: 'ocpi-2.1.1/location.json' }, errors: ['FOREIGN_PARTY', 'NOT_ENOUGH_INFORMATION', 'UNKNOWN_LOCATION'] },
  { method: 'get', path: `${V211}/locations/{location_id}/{evse_uid}`, module: 'locations', summary: 'eMSP read of one EVSE of a routed CPO by its ids (OCPI 2.1.1 objects)', auth: 'hub-token', data: { schema: 'ocpi-2.1.1/evse.json' }, errors: ['FOREIGN_PARTY', 'NOT_ENOUGH_INFORMATION', 'UNKNOWN_LOCATION'] },
];

/** The OCPI 2.3.0 form of a 2.2.1 route served through the same handler (docs/decisions/0012-ocpi-2.3.0-through-the-2.2.1-canonical-form.md). */
function in230(route: RouteSpec): RouteSpec {
  const schema = (id: string) => id.replace(/^ocpi\//, 'ocpi-2.3.0/');
  return {
    ...route,
    path: route.path.replace(V, V230),
    summary: `${route.summary} (OCPI 2.3.0 objects)`,
    ...(route.body ? { body: { ...route.body, schemas: route.body.schemas.map(schema) } } : {}),
    ...(route.data ? { data: { ...route.data, schema: schema(route.data.schema) } } : {}),
  };
}

/** The modules 2.3.0 partners use through the 2.2.1 routes so far (the ingress's MODULES_230), and the commands callback a 2.3.0 CPO posts its result to. */
const SERVED_IN_230 = ['hubclientinfo', 'locations', 'tariffs', 'sessions', 'cdrs', 'tokens', 'commands', 'chargingprofiles'];
const servedIn230 = (r: RouteSpec) => SERVED_IN_230.includes(r.module);

export const API_CATALOGUE: readonly RouteSpec[] = [
  ...ROUTES_221,
  ...ROUTES_221.filter((r) => SERVED_IN_211.includes(r.module) && r.path.startsWith(`${V}/`) && !notIn211(r)).map(in211),
  ...ONLY_211,
  ...ROUTES_221.filter((r) => servedIn230(r) && r.path.startsWith(`${V}/`)).map(in230),
];
