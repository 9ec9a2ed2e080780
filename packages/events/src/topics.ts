// Topic names (reference design, Topics). The definitions (partitions, replication, retention) are
// declared by the module that owns each topic (@hub/modules) and written to infra/topics.json by
// infra/generate-topics.ts; tests keep the three in step. Names carry a version: a breaking change to an
// event schema is a new topic version, never an edit in place.
export const topics = {
  locations: 'ocpi.locations.v1',
  tariffs: 'ocpi.tariffs.v1',
  sessions: 'ocpi.sessions.v1',
  cdrs: 'ocpi.cdrs.v1',
  commands: 'ocpi.commands.v1',
  chargingProfiles: 'ocpi.chargingprofiles.v1',
  tokens: 'ocpi.tokens.v1',
  registry: 'hub.registry.v1',
  // The live objects of the projected models, one record per object (Kafka log compaction): what a
  // read model is rebuilt from (docs/decisions/0014-snapshot-topics.md).
  locationsSnapshot: 'ocpi.locations-snapshot.v1',
  tariffsSnapshot: 'ocpi.tariffs-snapshot.v1',
  tokensSnapshot: 'ocpi.tokens-snapshot.v1',
} as const;

export type TopicId = keyof typeof topics;

/** One topic as the stack, the migrate job and the docs create and describe it (infra/topics.json). */
export interface TopicDefinition {
  readonly name: string;
  readonly partitions: number;
  /** Production replication; clamped to the brokers present (a local stack has one). */
  readonly replicationFactor: number;
  readonly config: Readonly<Record<string, string>>;
  /**
   * The compacted topic that keeps this change topic's live objects (docs/decisions/0014-snapshot-topics.md):
   * the change topic's retention may then be bounded, and the snapshot keeps tombstones as long.
   */
  readonly snapshot?: string;
  readonly description?: string;
}

// Event types, beside the topics they are appended to (schemas: schemas/events/<type>.json). The record
// value of an OCPI object event is the object or patch exactly as the party pushed and the hub
// validated it; the subject carries its path (country_code/party_id/id[/evse_uid[/connector_id]], each
// segment URI-encoded), so a consumer needs nothing else. Registry events: registry-events.ts.

/** ocpi.locations.v1 (mod_locations.asciidoc, Receiver interface PUT and PATCH at each level). */
export const locationEventTypes = {
  locationPut: 'ocpi.locations.location-put.v1',
  locationPatched: 'ocpi.locations.location-patched.v1',
  evsePut: 'ocpi.locations.evse-put.v1',
  evsePatched: 'ocpi.locations.evse-patched.v1',
  connectorPut: 'ocpi.locations.connector-put.v1',
  connectorPatched: 'ocpi.locations.connector-patched.v1',
} as const;

/** ocpi.tariffs.v1 (mod_tariffs.asciidoc, Receiver interface PUT and DELETE). */
export const tariffEventTypes = {
  tariffPut: 'ocpi.tariffs.tariff-put.v1',
  /** mod_tariffs.asciidoc, Receiver interface, DELETE: the value is {}. */
  tariffDeleted: 'ocpi.tariffs.tariff-deleted.v1',
} as const;

/**
 * ocpi.sessions.v1: the full Session as pushed (PUT; ocpi-to names the eMSP), or the partial Session
 * as patched (PATCH; merged by the dispatcher into the session it holds); subject cc/pid/session_id.
 */
export const sessionEventTypes = {
  sessionPut: 'ocpi.sessions.session-put.v1',
  sessionPatched: 'ocpi.sessions.session-patched.v1',
} as const;

/** ocpi.cdrs.v1 (the analytics contract, README): the CDR as posted; subject cc/pid/cdr_id. */
export const cdrEventTypes = {
  cdrPosted: 'ocpi.cdrs.cdr-posted.v1',
} as const;

/** ocpi.commands.v1 (key and subject = the hub's command id): every step of a command. */
export const commandEventTypes = {
  requested: 'ocpi.commands.requested.v1',
  cpoResponded: 'ocpi.commands.cpo-responded.v1',
  resultReceived: 'ocpi.commands.result-received.v1',
  timedOut: 'ocpi.commands.timed-out.v1',
} as const;

/**
 * ocpi.chargingprofiles.v1 (mod_charging_profiles.asciidoc, Receiver and Sender interfaces): every
 * request an eMSP sent through the hub (set, get, clear; key and subject the hub's request id), the
 * CPO's answer and result or the hub's timeout, and every ActiveChargingProfile a CPO pushed (key and
 * subject cpo_cc/cpo_pid/session_id, so one session's updates stay in order).
 */
export const chargingProfileEventTypes = {
  requested: 'ocpi.chargingprofiles.requested.v1',
  cpoResponded: 'ocpi.chargingprofiles.cpo-responded.v1',
  resultReceived: 'ocpi.chargingprofiles.result-received.v1',
  timedOut: 'ocpi.chargingprofiles.timed-out.v1',
  activeProfilePut: 'ocpi.chargingprofiles.active-profile-put.v1',
} as const;

/**
 * ocpi.tokens.v1 (mod_tokens.asciidoc, Receiver interface PUT and PATCH, pushed by the eMSP):
 * subject cc/pid/"uid|TYPE" (a uid is unique per type only); ocpi-to names one CPO when the eMSP's
 * OCPI-to headers did, else the token goes to every CPO routed to the eMSP.
 */
export const tokenEventTypes = {
  tokenPut: 'ocpi.tokens.token-put.v1',
  tokenPatched: 'ocpi.tokens.token-patched.v1',
} as const;

/** The physical topic name: an optional prefix isolates test runs that share a broker. */
export function topicName(prefix: string, topic: string): string {
  // TOPIC_PREFIX "x" and "x." both give "x.ocpi.locations.v1".
  return prefix ? `${prefix.endsWith('.') ? prefix : `${prefix}.`}${topic}` : topic;
}

/**
 * The snapshot topics (docs/decisions/0014-snapshot-topics.md): the projector appends the whole
 * object as the read model holds it, keyed as its change topic is, or a tombstone (null value) when
 * the object is gone. ce_time is the object's creation time in the read model; the header
 * hub-change-position ("partition:offset") the change topic's next offset the state reflects.
 */
export const snapshotEventTypes = {
  location: 'ocpi.locations-snapshot.location.v1',
  tariff: 'ocpi.tariffs-snapshot.tariff.v1',
  token: 'ocpi.tokens-snapshot.token.v1',
} as const;
