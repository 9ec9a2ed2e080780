import { registryEventTypes } from '@hub/events';
import { stripSlashes, type OcpiModule } from '../module-rules.ts';
import { V221, type RouteSpec } from '../route-spec.ts';

// The names this module adds to core's ports (declaration merging; decision 0016).
declare module '@hub/core' {
  interface DeliveryKinds {
    client_info: true;
  }
}

// mod_hub_client_info.asciidoc: the hub's own objects, one per party, made from the registry's events
// (dispatcher, registry-consumer.ts) and pushed to every connected party with a routing rule with that
// party (Push model). Receiver interface: PUT {receiver}/{country_code}/{party_id} of the ClientInfo; a
// row's object id is "CC/PID/ROLE" and its recipient either role ('row'). It owns no topic: its events
// are the registry's (hub.registry.v1, @hub/events registryTopicDefinition).

const routes: readonly RouteSpec[] = [
  { method: 'get', path: `${V221}/hubclientinfo`, module: 'hubclientinfo', summary: "The caller's parties and those it has an active routing rule with", auth: 'hub-token', data: { schema: 'ocpi/client_info.json', list: true }, paginated: true, errors: ['INVALID_PARAMETERS'] },
];

export const hubClientInfoModule = {
  id: 'hubclientinfo',
  topic: 'registry',
  eventTypes: {
    partyRegistered: registryEventTypes.partyRegistered,
    partyReinstated: registryEventTypes.partyReinstated,
    partySuspended: registryEventTypes.partySuspended,
    platformHealthChanged: registryEventTypes.platformHealthChanged,
  },
  key: 'registry',
  owner: 'HUB',
  visibility: 'routed',
  notFound: { pull: 'NOT_FOUND', push: 'NOT_FOUND' },
  http: {
    // The hub owns ClientInfo and implements the Sender Interface (GET); the Receiver Interface is the
    // connected parties' own, where the hub PUTs ClientInfo. 2.1.1 has no such module; 2.3.0 as 2.2.1
    // (ocpi-2.3.0/mod_hub_client_info.asciidoc: a ClientInfo is the same object).
    endpoints: {
      '2.2.1': [{ roles: ['SENDER'], path: 'hubclientinfo' }],
      '2.3.0': [{ roles: ['SENDER'], path: 'hubclientinfo' }],
    },
    routes,
  },
  topics: [],
  delivery: {
    kind: 'client_info',
    receiverModule: 'hubclientinfo',
    recipient: 'row',
    method: 'PUT',
    url: (receiverUrl, { payload }) => `${stripSlashes(receiverUrl)}/${encodeURIComponent(String(payload['country_code']))}/${encodeURIComponent(String(payload['party_id']))}`,
    keeps: { newestBy: 'last_updated' },
    route: 'rule',
    routingHeaders: false,
    // ocpi-2.3.0/mod_hub_client_info.asciidoc: the same ClientInfo as 2.2.1's; 2.1.1 has no such
    // module (its parties are no recipients, postgres-client-info-recipients.ts).
    translation: { unchangedIn: '2.3.0' },
  },
  // mod_hub_client_info.asciidoc, Receiver interface, GET {url}/{country_code}/{party_id}: the hub's own ClientInfo.
  receiverProbe: { path: (hub) => `/${hub.countryCode}/${hub.partyId}` },
} as const satisfies OcpiModule;
