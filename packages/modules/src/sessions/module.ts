import { sessionEventTypes, topics } from '@hub/events';
import { stripSlashes, type OcpiModule } from '../module-rules.ts';
import { PUSH_ERRORS, V221, type RouteSpec } from '../route-spec.ts';
import { eventTopic, RETAIN_30_DAYS } from '../topic-definitions.ts';

// The names this module adds to core's ports (declaration merging; decision 0016).
declare module '@hub/core' {
  interface DeliveryKinds {
    session: true;
  }
}

// mod_sessions.asciidoc: pushed by the CPO, delivered to the eMSP of its cdr_token. Interface
// document, Receiver endpoints: PUT {receiver}/{cpo cc}/{cpo pid}/{session id}, always the full
// latest state.

const SESSION = `${V221}/sessions/{country_code}/{party_id}/{session_id}`;

const routes: readonly RouteSpec[] = [
  { method: 'put', path: SESSION, module: 'sessions', summary: 'CPO push of a full Session', auth: 'hub-token', body: { schemas: ['ocpi/session.json'] }, errors: PUSH_ERRORS },
  { method: 'patch', path: SESSION, module: 'sessions', summary: 'CPO update of a Session the hub holds (last_updated required)', auth: 'hub-token', body: { schemas: ['ocpi/session.json'], partial: true }, errors: [...PUSH_ERRORS, 'UNKNOWN_SESSION'] },
];

export const sessionsModule = {
  id: 'sessions',
  topic: 'sessions',
  eventTypes: sessionEventTypes,
  key: 'object',
  owner: 'CPO',
  visibility: 'recipient',
  notFound: { pull: 'UNKNOWN_SESSION', push: 'UNKNOWN_SESSION' },
  http: {
    // CPOs push sessions to the hub, which delivers them to eMSPs (not pulled from it); a 2.1.1 CPO
    // pushes to the eMSP interface (mod_sessions.md 2.2), a 2.3.0 one as in 2.2.1.
    endpoints: {
      '2.2.1': [{ roles: ['RECEIVER'], path: 'sessions' }],
      '2.1.1': [{ roles: ['RECEIVER'], path: 'sessions' }],
      '2.3.0': [{ roles: ['RECEIVER'], path: 'sessions' }],
    },
    routes,
  },
  topics: [eventTopic(topics.sessions, 12, RETAIN_30_DAYS, 'Session PUT as pushed by CPOs; key cpo_cc/cpo_pid/session_id; 30 days')],
  delivery: {
    kind: 'session',
    receiverModule: 'sessions',
    recipient: 'EMSP',
    method: 'PUT',
    url: (receiverUrl, { cpo, objectId }) => `${stripSlashes(receiverUrl)}/${cpo.countryCode}/${cpo.partyId}/${encodeURIComponent(objectId)}`,
    keeps: { newestBy: 'last_updated' },
    prunedWhenDelivered: true,
    emspNamedBy: 'cdr_token',
    // A PATCH need not carry cdr_token: it goes to the eMSP of the session it patches.
    patchMergesInto: 'owners-object',
    translation: { object: 'Session', locationIdAt: ['location_id'] },
  },
  // The driver is named by the CdrToken (mod_sessions.asciidoc, Session object): its uid and
  // contract_id (a 2.1.1 auth_id is the contract_id), and an auth_id should hub_version_fields ever
  // keep one (docs/reference/version-mapping.md; decision 0013).
  personalData: {
    object: 'session',
    driverToken: ['cdr_token'],
    fields: [['cdr_token', 'uid'], ['cdr_token', 'contract_id'], ['hub_version_fields', '2.1.1', 'kept', 'auth_id']],
  },
  // mod_sessions.asciidoc, Receiver interface, GET {url}/{country_code}/{party_id}/{session_id}: the hub as the CPO.
  receiverProbe: { path: (hub, id) => `/${hub.countryCode}/${hub.partyId}/${id}` },
} as const satisfies OcpiModule;
