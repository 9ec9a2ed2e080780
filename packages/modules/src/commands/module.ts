import { commandEventTypes, topics } from '@hub/events';
import type { OcpiModule } from '../module-rules.ts';
import { V221, type RouteSpec } from '../route-spec.ts';
import { eventTopic, RETAIN_7_DAYS } from '../topic-definitions.ts';
import { TOKEN_PERSONAL_FIELDS } from '../tokens/personal-fields.ts';

// The names this module adds to core's ports (declaration merging; decision 0016).
declare module '@hub/core' {
  interface DeliveryKinds {
    command_result: true;
  }
}

// mod_commands.asciidoc: requested by the eMSP, forwarded to the CPO; the CommandResult goes to the
// response_url the eMSP gave (the delivery's fixed URL), as POST.

const routes: readonly RouteSpec[] = [
  {
    method: 'post', path: `${V221}/commands/{command}`, module: 'commands', summary: 'eMSP command, forwarded to the CPO', auth: 'hub-token',
    body: { schemas: ['ocpi/start_session.json', 'ocpi/stop_session.json', 'ocpi/reserve_now.json', 'ocpi/cancel_reservation.json', 'ocpi/unlock_connector.json'] }, data: { schema: 'ocpi/command_response.json' }, requestHeaders: ['OCPI-from', 'OCPI-to'],
    errors: ['INVALID_PARAMETERS', 'FOREIGN_PARTY', 'RATE_LIMITED', 'NOT_ENOUGH_INFORMATION', 'NOT_FOUND'],
    // 2.1.1 has no CANCEL_RESERVATION (mod_commands.md, 2.1.1).
    bodyIn211: ['ocpi-2.1.1/start_session.json', 'ocpi-2.1.1/stop_session.json', 'ocpi-2.1.1/reserve_now.json', 'ocpi-2.1.1/unlock_connector.json'],
  },
  {
    method: 'post', path: `${V221}/commands/callback/{command_id}`, module: 'commands', summary: "The CPO's CommandResult for a command the hub forwarded", auth: 'none', body: { schemas: ['ocpi/command_result.json'] }, errors: ['INVALID_PARAMETERS', 'NOT_FOUND'],
    // A 2.1.1 CPO posts a CommandResponse as its result (mod_commands.md, 2.1.1).
    bodyIn211: ['ocpi-2.1.1/command_response.json'],
  },
];

export const commandsModule = {
  id: 'commands',
  topic: 'commands',
  eventTypes: commandEventTypes,
  key: 'command',
  owner: 'EMSP',
  visibility: 'recipient',
  notFound: { pull: 'NOT_FOUND', push: 'NOT_FOUND' },
  http: {
    // eMSPs send commands to the hub, which forwards them (interface document, Commands). The hub is
    // no commands SENDER to list: a CPO posts its CommandResult to the response_url of each command,
    // whose structure "is open to the Sender to define" (mod_commands.asciidoc, Sender Interface): the
    // hub's callback of the CPO's own version. 2.1.1 and 2.3.0 as 2.2.1 (mod_commands.md;
    // ocpi-2.3.0/mod_commands.asciidoc, Receiver Interface).
    endpoints: {
      '2.2.1': [{ roles: ['RECEIVER'], path: 'commands' }],
      '2.1.1': [{ roles: ['RECEIVER'], path: 'commands' }],
      '2.3.0': [{ roles: ['RECEIVER'], path: 'commands' }],
    },
    routes,
  },
  topics: [eventTopic(topics.commands, 6, RETAIN_7_DAYS, 'Command requested, CPO response, result received, timed out; key command_id; 7 days')],
  delivery: { kind: 'command_result', receiverModule: 'commands', recipient: 'EMSP', method: 'POST', url: (responseUrl) => responseUrl, keeps: 'every', prunedWhenDelivered: true, translation: { object: 'CommandResult' } },
  // A requested event's START_SESSION and RESERVE_NOW carry the driver's Token (mod_commands.asciidoc,
  // StartSession and ReserveNow objects); no Postgres table holds it (decision 0013).
  personalData: {
    object: 'command',
    driverToken: ['request', 'token'],
    fields: TOKEN_PERSONAL_FIELDS.map((path) => ['request', 'token', ...path]),
  },
  // mod_commands.asciidoc has no GET on the Receiver interface and a POST would start a command: the
  // URL a START_SESSION is posted to is probed for reachability only.
  receiverProbe: { path: () => '/START_SESSION', answersWithEnvelope: false },
} as const satisfies OcpiModule;
