import { chargingProfileEventTypes, topics } from '@hub/events';
import { stripSlashes, type OcpiModule } from '../module-rules.ts';
import { V221, type RouteSpec } from '../route-spec.ts';
import { eventTopic, RETAIN_7_DAYS } from '../topic-definitions.ts';

// The names this module adds to core's ports (declaration merging; decision 0016).
declare module '@hub/core' {
  interface DeliveryKinds {
    charging_profile_result: true;
    active_charging_profile: true;
  }
}

// mod_charging_profiles.asciidoc: set, get and clear requested by the eMSP of a session and forwarded
// to its CPO; the CPO's result goes to the response_url the eMSP gave (POST), like a CommandResult.
// The CPO's updated ActiveChargingProfile of a session (Sender interface, PUT) goes to the session's
// eMSP at PUT {sender}/{session_id}; a row holds the newest by start_date_time (the time the Charge
// Point calculated it), so an older update never overwrites a newer one.

const SUMMARIES = {
  put: "eMSP SetChargingProfile on a session the hub delivered to it, forwarded to the session's CPO",
  get: "eMSP request for the ActiveChargingProfile (?duration=&response_url=), forwarded to the session's CPO",
  delete: "eMSP clears its ChargingProfile (?response_url=), forwarded to the session's CPO",
} as const;

const routes: readonly RouteSpec[] = [
  ...(['put', 'get', 'delete'] as const).map(
    (method): RouteSpec => ({
      method,
      path: `${V221}/chargingprofiles/{session_id}`,
      module: 'chargingprofiles',
      summary: SUMMARIES[method],
      auth: 'hub-token',
      ...(method === 'put' ? { body: { schemas: ['ocpi/set_charging_profile.json'] } } : { query: method === 'get' ? (['duration', 'response_url'] as const) : (['response_url'] as const) }),
      data: { schema: 'ocpi/charging_profile_response.json' },
      requestHeaders: ['OCPI-from', 'OCPI-to'],
      errors: ['INVALID_PARAMETERS', 'FOREIGN_PARTY', 'RATE_LIMITED', 'NOT_ENOUGH_INFORMATION', 'UNKNOWN_SESSION'],
    }),
  ),
  {
    method: 'put', path: `${V221}/chargingprofiles/sender/{session_id}`, module: 'chargingprofiles', summary: "CPO push of an updated ActiveChargingProfile, delivered to the session's eMSP", auth: 'hub-token',
    body: { schemas: ['ocpi/active_charging_profile.json'] }, requestHeaders: ['OCPI-from', 'OCPI-to'], errors: ['INVALID_PARAMETERS', 'FOREIGN_PARTY', 'UNKNOWN_SESSION'],
  },
  { method: 'post', path: `${V221}/chargingprofiles/callback/{request_id}`, module: 'chargingprofiles', summary: "The CPO's ActiveChargingProfileResult, ChargingProfileResult or ClearProfileResult for a request the hub forwarded", auth: 'none', body: { schemas: ['ocpi/charging_profile_result.json'] }, errors: ['INVALID_PARAMETERS', 'NOT_FOUND'] },
];

export const chargingProfilesModule = {
  id: 'chargingprofiles',
  topic: 'chargingProfiles',
  eventTypes: chargingProfileEventTypes,
  key: 'command',
  owner: 'EMSP',
  visibility: 'recipient',
  notFound: { pull: 'UNKNOWN_SESSION', push: 'UNKNOWN_SESSION' },
  http: {
    // eMSPs set, get and clear profiles at the hub (it receives, and forwards to the session's CPO);
    // CPOs push updated ActiveChargingProfiles to it (it is their Sender). The SENDER endpoint has a
    // path of its own so its PUT {session_id} is not the Receiver's. Not in 2.1.1, which has no such
    // module; 2.3.0 as 2.2.1 (ocpi-2.3.0/mod_charging_profiles.asciidoc).
    endpoints: {
      '2.2.1': [{ roles: ['RECEIVER'], path: 'chargingprofiles' }, { roles: ['SENDER'], path: 'chargingprofiles/sender' }],
      '2.3.0': [{ roles: ['RECEIVER'], path: 'chargingprofiles' }, { roles: ['SENDER'], path: 'chargingprofiles/sender' }],
    },
    routes,
  },
  topics: [
    eventTopic(
      topics.chargingProfiles,
      6,
      RETAIN_7_DAYS,
      'ChargingProfile set, get and clear requested, CPO response, result received, timed out (key request_id); ActiveChargingProfile pushed by CPOs (key CPO_CC/PID/SESSION_ID); 7 days',
    ),
  ],
  // ocpi-2.3.0/mod_charging_profiles.asciidoc: the same objects as 2.2.1's (the ingress holds them in
  // that form); 2.1.1 has no such module.
  delivery: { kind: 'charging_profile_result', receiverModule: 'chargingprofiles', recipient: 'EMSP', method: 'POST', url: (responseUrl) => responseUrl, keeps: 'every', translation: { unchangedIn: '2.3.0' } },
  moreDeliveries: [
    {
      kind: 'active_charging_profile',
      receiverModule: 'chargingprofiles',
      interfaceRole: 'SENDER',
      recipient: 'EMSP',
      method: 'PUT',
      url: (senderUrl, { objectId }) => `${stripSlashes(senderUrl)}/${encodeURIComponent(objectId)}`,
      keeps: { newestBy: 'start_date_time' },
      translation: { unchangedIn: '2.3.0' },
    },
  ],
} as const satisfies OcpiModule;
