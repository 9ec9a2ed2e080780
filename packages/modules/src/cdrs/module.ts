import { cdrEventTypes, topics } from '@hub/events';
import { stripSlashes, type OcpiModule } from '../module-rules.ts';
import { PUSH_ERRORS, V221, type RouteSpec } from '../route-spec.ts';
import { eventTopic, RETAIN_FOREVER } from '../topic-definitions.ts';

// The names this module adds to core's ports (declaration merging; decision 0016).
declare module '@hub/core' {
  interface DeliveryKinds {
    cdr: true;
  }
}

// mod_cdrs.asciidoc: posted by the CPO, delivered to the eMSP of its cdr_token: POST {receiver}. Each
// CDR once in ocpi.cdrs.v1, the analytics contract, kept forever (docs/decisions/0003-each-cdr-once.md).

const routes: readonly RouteSpec[] = [
  { method: 'post', path: `${V221}/cdrs`, module: 'cdrs', summary: 'CPO push of a CDR (owner from the body)', auth: 'hub-token', body: { schemas: ['ocpi/cdr.json'] }, responseHeaders: ['Location'], errors: PUSH_ERRORS },
  { method: 'get', path: `${V221}/cdrs/{country_code}/{party_id}/{cdr_id}`, module: 'cdrs', summary: 'The owning CPO reads the CDR the hub holds', auth: 'hub-token', data: { schema: 'ocpi/cdr.json' }, errors: [...PUSH_ERRORS, 'NOT_FOUND'] },
];

export const cdrsModule = {
  id: 'cdrs',
  topic: 'cdrs',
  eventTypes: cdrEventTypes,
  key: 'object',
  owner: 'CPO',
  visibility: 'recipient',
  notFound: { pull: 'NOT_FOUND', push: 'NOT_FOUND' },
  http: {
    // A 2.1.1 CPO posts CDRs to the eMSP interface (mod_cdrs.md 2.2); a 2.3.0 CPO as in 2.2.1, its
    // Prices translated at the edge (ADR 0012).
    endpoints: {
      '2.2.1': [{ roles: ['RECEIVER'], path: 'cdrs' }],
      '2.1.1': [{ roles: ['RECEIVER'], path: 'cdrs' }],
      '2.3.0': [{ roles: ['RECEIVER'], path: 'cdrs' }],
    },
    routes,
  },
  topics: [eventTopic(topics.cdrs, 12, RETAIN_FOREVER, 'CDRs posted by CPOs; key cpo_cc/cpo_pid/cdr_id; the analytics contract')],
  delivery: {
    kind: 'cdr',
    receiverModule: 'cdrs',
    recipient: 'EMSP',
    method: 'POST',
    url: (receiverUrl) => stripSlashes(receiverUrl),
    keeps: 'every',
    deliveredOnce: true,
    prunedWhenDelivered: true,
    emspNamedBy: 'cdr_token',
    translation: { object: 'CDR', locationIdAt: ['cdr_location', 'id'] },
  },
  // As a Session's (mod_cdrs.asciidoc, CDR object: cdr_token): the topic is the analytics contract,
  // which reads the data key's id as a pseudonymous driver id (decision 0013).
  personalData: {
    object: 'cdr',
    driverToken: ['cdr_token'],
    fields: [['cdr_token', 'uid'], ['cdr_token', 'contract_id'], ['hub_version_fields', '2.1.1', 'kept', 'auth_id']],
  },
  // mod_cdrs.asciidoc, Receiver interface, GET: the URL is the eMSP's to define (its POST answer's
  // Location); probed in the form of the chapter's example, {url}/{id}.
  receiverProbe: { path: (_hub, id) => `/${id}` },
} as const satisfies OcpiModule;
