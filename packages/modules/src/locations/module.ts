import { locationEventTypes, snapshotEventTypes, topics } from '@hub/events';
import type { OcpiModule } from '../module-rules.ts';
import { LIST_ERRORS, PUSH_ERRORS, V211, V221, type RouteSpec } from '../route-spec.ts';
import { backedBy, eventTopic, RETAIN_30_DAYS, snapshotTopic } from '../topic-definitions.ts';
import { stringMember } from '../object-events.ts';
import { applyLocationEvent, findInLocation } from './apply.ts';

// The names this module adds to core's ports (declaration merging; decision 0016).
declare module '@hub/core' {
  interface ReadModels {
    locations: true;
  }
}

// mod_locations.asciidoc: CPO-owned, pulled by eMSPs (list and detail), PATCHed at three levels.

const LOC = `${V221}/locations/{country_code}/{party_id}/{location_id}`;
const LEVELS = [
  { path: LOC, schema: 'ocpi/location.json', what: 'Location' },
  { path: `${LOC}/{evse_uid}`, schema: 'ocpi/evse.json', what: 'EVSE' },
  { path: `${LOC}/{evse_uid}/{connector_id}`, schema: 'ocpi/connector.json', what: 'Connector' },
] as const;

const routes: readonly RouteSpec[] = [
  { method: 'get', path: `${V221}/locations`, module: 'locations', summary: 'eMSP pull of the locations of routed CPOs', auth: 'hub-token', data: { schema: 'ocpi/location.json', list: true }, paginated: true, requestHeaders: ['OCPI-from'], errors: LIST_ERRORS },
  ...LEVELS.flatMap(({ path, schema, what }): RouteSpec[] => [
    { method: 'get', path, module: 'locations', summary: `${what} detail for routed eMSPs and the owning CPO`, auth: 'hub-token', data: { schema }, errors: ['INVALID_PARAMETERS', 'UNKNOWN_LOCATION'] },
    { method: 'put', path, module: 'locations', summary: `CPO push of a full ${what}`, auth: 'hub-token', body: { schemas: [schema] }, errors: [...PUSH_ERRORS, 'UNKNOWN_LOCATION_PUSH'] },
    { method: 'patch', path, module: 'locations', summary: `CPO update of a ${what} (last_updated required)`, auth: 'hub-token', body: { schemas: [schema], partial: true }, errors: [...PUSH_ERRORS, 'UNKNOWN_LOCATION_PUSH'] },
    { method: 'delete', path, module: 'locations', summary: 'Not supported: PATCH the EVSE status to REMOVED (mod_locations.asciidoc)', auth: 'hub-token', errors: ['METHOD_NOT_ALLOWED'] },
  ]),
];

/** mod_locations.md 2.1.2 (2.1.1, CPO interface): an eMSP reads a Location or EVSE by its ids alone. */
const onlyIn211: readonly RouteSpec[] = [
  { method: 'get', path: `${V211}/locations/{location_id}`, module: 'locations', summary: 'eMSP read of one Location of a routed CPO by its id (OCPI 2.1.1 objects)', auth: 'hub-token', data: { schema: 'ocpi-2.1.1/location.json' }, errors: ['FOREIGN_PARTY', 'NOT_ENOUGH_INFORMATION', 'UNKNOWN_LOCATION'] },
  { method: 'get', path: `${V211}/locations/{location_id}/{evse_uid}`, module: 'locations', summary: 'eMSP read of one EVSE of a routed CPO by its ids (OCPI 2.1.1 objects)', auth: 'hub-token', data: { schema: 'ocpi-2.1.1/evse.json' }, errors: ['FOREIGN_PARTY', 'NOT_ENOUGH_INFORMATION', 'UNKNOWN_LOCATION'] },
];

export const locationsModule = {
  id: 'locations',
  topic: 'locations',
  eventTypes: locationEventTypes,
  key: 'object',
  owner: 'CPO',
  visibility: 'routed',
  notFound: { pull: 'UNKNOWN_LOCATION', push: 'UNKNOWN_LOCATION_PUSH' },
  http: {
    // CPOs push to the hub (it receives) and eMSPs pull from it (it sends): listed once per role. A 2.1.1
    // CPO pushes to {cc}/{pid}/{id} (the eMSP interface, mod_locations.md 3.2) and an eMSP pulls the list
    // (the CPO interface, mod_locations.md 3.1.1), through the same routes; 2.3.0 keeps 2.2.1's
    // interfaces (ocpi-2.3.0/mod_locations.asciidoc).
    endpoints: {
      '2.2.1': [{ roles: ['SENDER', 'RECEIVER'], path: 'locations' }],
      '2.1.1': [{ roles: ['SENDER', 'RECEIVER'], path: 'locations' }],
      '2.3.0': [{ roles: ['SENDER', 'RECEIVER'], path: 'locations' }],
    },
    routes,
    onlyIn: onlyIn211,
  },
  topics: [
    backedBy(topics.locationsSnapshot, eventTopic(topics.locations, 6, RETAIN_30_DAYS, 'Location, EVSE and connector PUT/PATCH as pushed by CPOs; key cc/pid/location_id; 30 days (the snapshot keeps the live locations)')),
    snapshotTopic(topics.locationsSnapshot, 6, 'Every live location, whole, as the read model holds it (compacted; null value: gone); key as ocpi.locations.v1; header hub-change-position: the change offset it reflects'),
  ],
  projection: {
    table: 'locations',
    snapshot: { topic: 'locationsSnapshot', type: snapshotEventTypes.location },
    evolve: applyLocationEvent,
    replacesWholeObject: (type) => type === locationEventTypes.locationPut,
    find: findInLocation,
    listBudget: 'locations-list',
    objectId: (document) => stringMember(document, 'id'),
  },
} as const satisfies OcpiModule;
