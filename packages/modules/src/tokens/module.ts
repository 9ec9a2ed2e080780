import { tokenEventTypes, snapshotEventTypes, topics } from '@hub/events';
import { stripSlashes, type OcpiModule } from '../module-rules.ts';
import { asResult, putOrPatch, unknownEventType, type ApplyResult, type Json } from '../newest-wins.ts';
import { stringMember } from '../object-events.ts';
import { LIST_ERRORS, PUSH_ERRORS, V221, type RouteSpec } from '../route-spec.ts';
import { backedBy, eventTopic, RETAIN_30_DAYS, snapshotTopic } from '../topic-definitions.ts';
import { splitTokenObjectId, tokenObjectId } from './token-id.ts';
import { TOKEN_PERSONAL_FIELDS } from './personal-fields.ts';

// The names this module adds to core's ports (declaration merging; decision 0016).
declare module '@hub/core' {
  interface ReadModels {
    tokens: true;
  }
  interface DeliveryKinds {
    token: true;
  }
}

// mod_tokens.asciidoc: eMSP-owned; pushed by the eMSP (PUT, PATCH), pulled by routed CPOs
// and delivered to them (Receiver interface: PUT {receiver}/{emsp cc}/{emsp pid}/{uid}?type=), each
// CPO the newest full token (a PATCH is merged first). The object id is "uid|TYPE" (token-id.ts).

/** mod_tokens.asciidoc, Receiver interface: PUT replaces, PATCH merges into a token the hub holds. */
export function applyTokenEvent(stored: Json | undefined, type: string, data: Json): ApplyResult {
  switch (type) {
    case tokenEventTypes.tokenPut:
    case tokenEventTypes.tokenPatched:
      return asResult(putOrPatch(stored, data, type === tokenEventTypes.tokenPut, 'unknown token'));
    default:
      return unknownEventType(type);
  }
}

const TOKEN = `${V221}/tokens/{country_code}/{party_id}/{token_uid}`;
const FORWARD_ERRORS = ['INVALID_PARAMETERS', 'FOREIGN_PARTY', 'RATE_LIMITED', 'NOT_ENOUGH_INFORMATION'] as const;
const FORWARD_FAILURES = ['UNKNOWN_RECEIVER', 'FORWARD_TIMEOUT', 'RECEIVER_NOT_CONNECTED', 'FORWARD_FAILED'] as const;

const routes: readonly RouteSpec[] = [
  { method: 'get', path: `${V221}/tokens`, module: 'tokens', summary: 'CPO pull of the tokens of routed eMSPs', auth: 'hub-token', data: { schema: 'ocpi/token.json', list: true }, paginated: true, requestHeaders: ['OCPI-from'], errors: LIST_ERRORS },
  { method: 'get', path: TOKEN, module: 'tokens', summary: 'Token detail (?type=, default RFID) for the owning eMSP and routed CPOs', auth: 'hub-token', data: { schema: 'ocpi/token.json' }, errors: ['INVALID_PARAMETERS', 'UNKNOWN_TOKEN'] },
  { method: 'put', path: TOKEN, module: 'tokens', summary: 'eMSP push of a full Token (?type=, default RFID), delivered to routed CPOs or the one OCPI-to names', auth: 'hub-token', body: { schemas: ['ocpi/token.json'] }, requestHeaders: ['OCPI-to'], errors: [...PUSH_ERRORS, 'UNKNOWN_RECEIVER'] },
  { method: 'patch', path: TOKEN, module: 'tokens', summary: 'eMSP update of a Token the hub holds (?type=, default RFID; last_updated required)', auth: 'hub-token', body: { schemas: ['ocpi/token.json'], partial: true }, requestHeaders: ['OCPI-to'], errors: [...PUSH_ERRORS, 'UNKNOWN_RECEIVER', 'UNKNOWN_TOKEN'] },
  { method: 'delete', path: TOKEN, module: 'tokens', summary: 'Not supported: PUT or PATCH the token with valid false (mod_tokens.asciidoc)', auth: 'hub-token', errors: ['METHOD_NOT_ALLOWED'] },
  {
    method: 'put', path: `${TOKEN}/authorize`, module: 'tokens', summary: 'eMSP real-time authorization, forwarded to the CPO', auth: 'hub-token',
    body: { schemas: ['ocpi/location_references.json'], optional: true }, data: { schema: 'ocpi/authorization_info.json' }, requestHeaders: ['OCPI-to'],
    errors: [...FORWARD_ERRORS, 'UNKNOWN_LOCATION_PUSH', ...FORWARD_FAILURES],
    // mod_tokens.md (2.1.1): an eMSP asks no real-time authorization in 2.1.1 (only the CPO does).
    notIn: ['2.1.1'],
  },
  {
    method: 'post', path: `${V221}/tokens/{token_uid}/authorize`, module: 'tokens', summary: "CPO real-time authorization, forwarded to the token's eMSP (OCPI-to, else the eMSP that pushed the token)", auth: 'hub-token',
    body: { schemas: ['ocpi/location_references.json'], optional: true }, data: { schema: 'ocpi/authorization_info.json' }, requestHeaders: ['OCPI-from', 'OCPI-to'], tokenType: true,
    errors: [...FORWARD_ERRORS, 'UNKNOWN_TOKEN_AUTHORIZE', ...FORWARD_FAILURES],
  },
];

export const tokensModule = {
  id: 'tokens',
  topic: 'tokens',
  eventTypes: tokenEventTypes,
  key: 'object',
  owner: 'EMSP',
  visibility: 'routed',
  notFound: { pull: 'UNKNOWN_TOKEN', push: 'UNKNOWN_TOKEN' },
  http: {
    // eMSPs push their tokens to the hub and ask it for real-time authorization (it receives:
    // interface document, Token authorization; mod_tokens.asciidoc, Receiver Interface); CPOs pull the
    // tokens of routed eMSPs from it and ask it for real-time authorization (it sends: Sender
    // Interface, GET and POST authorize). In 2.1.1 an eMSP pushes to the CPO interface and a CPO pulls
    // from the eMSP interface (mod_tokens.md, 2.1.1); 2.3.0 as 2.2.1 (ocpi-2.3.0/mod_tokens.asciidoc).
    endpoints: {
      '2.2.1': [{ roles: ['SENDER', 'RECEIVER'], path: 'tokens' }],
      '2.1.1': [{ roles: ['SENDER', 'RECEIVER'], path: 'tokens' }],
      '2.3.0': [{ roles: ['SENDER', 'RECEIVER'], path: 'tokens' }],
    },
    routes,
  },
  topics: [
    backedBy(topics.tokensSnapshot, eventTopic(topics.tokens, 6, RETAIN_30_DAYS, 'Token PUT/PATCH as pushed by eMSPs; key emsp_cc/emsp_pid/UID|TYPE; 30 days (the snapshot keeps the live tokens)')),
    snapshotTopic(topics.tokensSnapshot, 6, 'Every live token, whole, personal fields sealed as on ocpi.tokens.v1 (compacted); key as ocpi.tokens.v1; header hub-change-position: the change offset it reflects'),
  ],
  projection: {
    table: 'tokens',
    snapshot: { topic: 'tokensSnapshot', type: snapshotEventTypes.token },
    evolve: (stored, type, _path, data) => applyTokenEvent(stored, type, data),
    replacesWholeObject: (type) => type === tokenEventTypes.tokenPut,
    find: (document) => document,
    listBudget: 'tokens-list',
    objectId: (document) => {
      const uid = stringMember(document, 'uid');
      return uid === undefined ? undefined : tokenObjectId(uid, stringMember(document, 'type'));
    },
  },
  delivery: {
    kind: 'token',
    receiverModule: 'tokens',
    recipient: 'CPO',
    method: 'PUT',
    url: (receiverUrl, { emsp, objectId, payload }, version) => {
      // The uid as the eMSP wrote it (the row's id is upper-cased: a CiString, types.asciidoc).
      const key = splitTokenObjectId(objectId);
      const uid = typeof payload['uid'] === 'string' ? payload['uid'] : key.uid;
      const type = typeof payload['type'] === 'string' ? payload['type'] : key.type;
      const at = `${stripSlashes(receiverUrl)}/${emsp.countryCode}/${emsp.partyId}/${encodeURIComponent(uid)}`;
      // A 2.1.1 Token URL has no type (ocpi-2.1.1/mod_tokens.md 2.1.2): the type is the body's.
      return version === '2.1.1' ? at : `${at}?type=${encodeURIComponent(type)}`;
    },
    keeps: { newestBy: 'last_updated' },
    translation: { object: 'Token' },
    toEveryRoutedCpo: true,
    // A CPO routed after the token was pushed holds no version of it: it gets the whole token from the
    // read model (the dispatcher's re-send), not a PATCH merged into nothing.
    patchMergesInto: 'recipients-row',
  },
  // The objects are drivers' tokens: their events' subject and key name the token (decision 0013).
  personalData: { object: 'token', driverToken: 'subject', fields: TOKEN_PERSONAL_FIELDS },
  // mod_tokens.asciidoc, Receiver interface, GET {url}/{country_code}/{party_id}/{token_uid}[?type=]: the hub as the eMSP.
  receiverProbe: { path: (hub, id) => `/${hub.countryCode}/${hub.partyId}/${id}?type=RFID` },
} as const satisfies OcpiModule;
