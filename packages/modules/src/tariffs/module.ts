import { tariffEventTypes, snapshotEventTypes, topics } from '@hub/events';
import type { OcpiModule } from '../module-rules.ts';
import { unknownEventType, supersededBy, type ApplyResult, type Json } from '../newest-wins.ts';
import { stringMember } from '../object-events.ts';
import { LIST_ERRORS, PUSH_ERRORS, V211, V221, type RouteSpec } from '../route-spec.ts';
import { backedBy, eventTopic, RETAIN_30_DAYS, snapshotTopic } from '../topic-definitions.ts';

// The names this module adds to core's ports (declaration merging; decision 0016).
declare module '@hub/core' {
  interface ReadModels {
    tariffs: true;
  }
}

// mod_tariffs.asciidoc: CPO-owned, pulled by eMSPs; PUT and DELETE only (and a 2.1.1 PATCH, mod_tariffs.md 2.2.3).

/** mod_tariffs.asciidoc, Receiver interface: PUT replaces (newest wins), DELETE removes. */
export function applyTariffEvent(stored: Json | undefined, type: string, data: Json): ApplyResult {
  switch (type) {
    case tariffEventTypes.tariffPut:
      return supersededBy(stored, data) ?? { kind: 'upsert', document: data };
    // A DELETE carries no last_updated (mod_tariffs.asciidoc, DELETE Method): it applies in log order.
    case tariffEventTypes.tariffDeleted:
      return stored ? { kind: 'deleted' } : { kind: 'rejected', reason: 'unknown tariff' };
    default:
      return unknownEventType(type);
  }
}

const TARIFF = `${V221}/tariffs/{country_code}/{party_id}/{tariff_id}`;

const routes: readonly RouteSpec[] = [
  { method: 'get', path: `${V221}/tariffs`, module: 'tariffs', summary: 'eMSP pull of the tariffs of routed CPOs', auth: 'hub-token', data: { schema: 'ocpi/tariff.json', list: true }, paginated: true, requestHeaders: ['OCPI-from'], errors: LIST_ERRORS },
  { method: 'get', path: TARIFF, module: 'tariffs', summary: 'Tariff detail for routed eMSPs and the owning CPO', auth: 'hub-token', data: { schema: 'ocpi/tariff.json' }, errors: ['INVALID_PARAMETERS', 'UNKNOWN_TARIFF'] },
  { method: 'put', path: TARIFF, module: 'tariffs', summary: 'CPO push of a full Tariff', auth: 'hub-token', body: { schemas: ['ocpi/tariff.json'] }, errors: PUSH_ERRORS },
  { method: 'delete', path: TARIFF, module: 'tariffs', summary: 'CPO removes a tariff it no longer uses', auth: 'hub-token', errors: [...PUSH_ERRORS, 'UNKNOWN_TARIFF'] },
  { method: 'patch', path: TARIFF, module: 'tariffs', summary: 'Not supported: push the full tariff with PUT', auth: 'hub-token', errors: ['METHOD_NOT_ALLOWED'], notIn: ['2.1.1'] },
];

/** ocpi-2.1.1/mod_tariffs.md 2.2.3: 2.1.1 has a tariff PATCH (routes.ts, tariffPatch211). */
const onlyIn211: readonly RouteSpec[] = [
  { method: 'patch', path: `${V211}/tariffs/{country_code}/{party_id}/{tariff_id}`, module: 'tariffs', summary: 'CPO update of a Tariff: the fields sent replace the stored ones (OCPI 2.1.1 objects)', auth: 'hub-token', body: { schemas: ['ocpi-2.1.1/tariff.json'], partial: true }, errors: [...PUSH_ERRORS, 'UNKNOWN_TARIFF'] },
];

export const tariffsModule = {
  id: 'tariffs',
  topic: 'tariffs',
  eventTypes: tariffEventTypes,
  key: 'object',
  owner: 'CPO',
  visibility: 'routed',
  notFound: { pull: 'UNKNOWN_TARIFF', push: 'UNKNOWN_TARIFF' },
  http: {
    // CPOs push, eMSPs pull, in every version (ocpi-2.3.0/mod_tariffs.asciidoc as 2.2.1; tax_included
    // is kept for 2.3.0 readers: ADR 0012).
    endpoints: {
      '2.2.1': [{ roles: ['SENDER', 'RECEIVER'], path: 'tariffs' }],
      '2.1.1': [{ roles: ['SENDER', 'RECEIVER'], path: 'tariffs' }],
      '2.3.0': [{ roles: ['SENDER', 'RECEIVER'], path: 'tariffs' }],
    },
    routes,
    onlyIn: onlyIn211,
  },
  topics: [
    backedBy(topics.tariffsSnapshot, eventTopic(topics.tariffs, 3, RETAIN_30_DAYS, 'Tariff PUT and DELETE as pushed by CPOs; key cc/pid/tariff_id; 30 days (the snapshot keeps the live tariffs)')),
    snapshotTopic(topics.tariffsSnapshot, 3, 'Every live tariff, whole (compacted; null value: deleted); key as ocpi.tariffs.v1; header hub-change-position: the change offset it reflects'),
  ],
  projection: {
    table: 'tariffs',
    snapshot: { topic: 'tariffsSnapshot', type: snapshotEventTypes.tariff },
    evolve: (stored, type, _path, data) => applyTariffEvent(stored, type, data),
    replacesWholeObject: (type) => type === tariffEventTypes.tariffPut,
    find: (document) => document,
    objectId: (document) => stringMember(document, 'id'),
    // A 2.3.0 tariff's prices may include taxes at no given rate (ocpi-2.3.0/mod_tariffs.asciidoc,
    // PriceComponent): a 2.2.1 or 2.1.1 reader is not given it (decision 0012).
    pricesExcludeTaxesColumn: 'prices_exclude_taxes',
  },
} as const satisfies OcpiModule;
