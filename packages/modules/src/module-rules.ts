import type { TopicDefinition, TopicId } from '@hub/events';
import type { HubErrorKind, OcpiVersion, PartyRef } from '@hub/ocpi';
import type { ApplyResult, Json } from './newest-wins.ts';
import type { ModuleHttp } from './route-spec.ts';
import type { DeliveryKind, ObjectPath } from '@hub/core';

// The shape of one entry of the module table (modules.ts): what a module declares, in its own folder,
// about its HTTP surface, its topics and events, its read model and its deliveries.

export type { Json } from './newest-wins.ts';

/** How a module's events build its read model in Postgres (projector, rebuild, quarantine re-drive). */
export interface ProjectionRule {
  /** The read-model table (migrations 002, 007-009: generation, country_code, party_id, id, document). */
  readonly table: string;
  /** The object after one event; pure, so a replay gives the same rows. */
  evolve(stored: Json | undefined, type: string, path: ObjectPath, data: Json): ApplyResult;
  /** Whether an event replaces its whole object, so what is stored does not matter to it (a rebuild's PUTs). */
  replacesWholeObject(type: string): boolean;
  /** The part of a stored object a detail GET at `path` answers with (an EVSE inside a Location). */
  find(document: Json, path: ObjectPath): Json | undefined;
  /**
   * Its snapshot topic and the type of its records (docs/decisions/0014-snapshot-topics.md): every live
   * object, whole, as the read model holds it.
   */
  readonly snapshot: { readonly topic: TopicId; readonly type: string };
  /** Interface document, Limits: the rate-limit bucket of list pulls, if they have one. */
  readonly listBudget?: string;
  /**
   * The id its events name a stored object by, in the case the partner sent it (rows are keyed by the
   * upper-cased id; Kafka keys are not): a snapshot written from the read model keys it so.
   */
  objectId(document: Json): string | undefined;
  /**
   * Its objects carry prices that 2.2.1 and 2.1.1 give excluding taxes: the boolean column saying so
   * (migration 032). A list narrowed to `pricesExcludeTaxes` (ListNarrowing, @hub/core) keeps only the
   * rows where it is true (docs/decisions/0012-ocpi-2.3.0-through-the-2.2.1-canonical-form.md).
   */
  readonly pricesExcludeTaxesColumn?: 'prices_exclude_taxes';
}


/** What a delivery URL is made from: the row's pair, object and payload. */
export interface DeliveredObject {
  readonly emsp: PartyRef;
  readonly cpo: PartyRef;
  readonly objectId: string;
  readonly payload: Json;
}

/**
 * How the dispatcher sends a delivery's object to a receiver of another OCPI version than the canonical
 * 2.2.1 (docs/decisions/0008-one-canonical-form-translated-at-the-edge.md): by the version adapter's
 * translation of the OCPI object it is (@hub/versions adapter.ts), a Session or CDR with the path of
 * its Location's id, since a 2.1.1 one carries the whole Location (ocpi-2.1.1/mod_sessions.md 3.1,
 * mod_cdrs.md 3.1); or unchanged in the one other version that has it.
 */
export type DeliveryTranslation =
  | { readonly object: 'Session' | 'CDR'; readonly locationIdAt: readonly [string, ...string[]] }
  | { readonly object: 'Token' | 'CommandResult' }
  | { readonly unchangedIn: '2.3.0' };

export interface DeliveryRule {
  readonly kind: DeliveryKind;
  /** The module of the recipient's receiver endpoint (version details, operator overrides). */
  readonly receiverModule: string;
  /**
   * The role that receives it: the eMSP of the row (sessions, CDRs, command results) or its CPO
   * (tokens). A ClientInfo goes to either, so its rows name it ('row', migration 018 recipient_role).
   */
  readonly recipient: 'EMSP' | 'CPO' | 'row';
  readonly method: 'PUT' | 'POST';
  /** The URL the object is sent to, from the receiver's (or the request's fixed) URL, in the receiver's version. */
  url(receiverUrl: string, delivered: DeliveredObject, version: OcpiVersion): string;
  /**
   * { newestBy }: a delivery row holds the object's newest state and a newer event replaces an
   * undelivered older one, newer by the payload's `newestBy` time, then by offset (sessions, tokens and
   * ClientInfo by last_updated; an ActiveChargingProfile by start_date_time, the time the Charge Point
   * calculated it: mod_charging_profiles.asciidoc, ActiveChargingProfile class). 'every': each event is
   * its own delivery (a CDR is immutable).
   */
  readonly keeps: { readonly newestBy: 'last_updated' | 'start_date_time' } | 'every';
  /**
   * true: an object already queued or delivered is not queued again when its event is appended again
   * (a retried append), only when an operator replays it. A CDR never changes (mod_cdrs.asciidoc, CDR
   * object), so its receipt again is the same CDR.
   */
  readonly deliveredOnce?: true;
  /**
   * true: a delivered row is deleted once the retention period has passed (docs/decisions/0006-retention.md):
   * a session, CDR or command result was received and is done with. A row that is the version its
   * recipient holds (a token's, a ClientInfo's) stays as long as the object lives.
   */
  readonly prunedWhenDelivered?: true;
  /** For a receiver of another version than 2.2.1 (DeliveryTranslation). */
  readonly translation: DeliveryTranslation;
  /**
   * What must join the row's pair when it is delivered: an active route ('active', the default: an
   * enabled rule, neither party suspended) or only an enabled rule ('rule': a ClientInfo announces
   * that the other party of the rule is suspended, so the suspension must not hold it back).
   */
  readonly route?: 'active' | 'rule';
  /**
   * false: sent without OCPI-from/to headers. transport_and_format.asciidoc, Message Routing: Hub
   * Client Info is Platform-to-Hub communication, "routing headers SHALL NOT be used".
   */
  readonly routingHeaders?: false;
  /**
   * The interface of the recipient's registered endpoint: RECEIVER unless said. An ActiveChargingProfile
   * goes to the eMSP's chargingprofiles SENDER interface (mod_charging_profiles.asciidoc, Sender
   * interface, PUT).
   */
  readonly interfaceRole?: 'SENDER';
  /**
   * The member of its object that names the eMSP it goes to: a Session's or CDR's cdr_token, whose
   * country_code and party_id are the eMSP's that owns the driver's Token (mod_cdrs.asciidoc, CdrToken
   * class). A 2.1.1 CPO names the driver only by auth_id, so such a row may be held for the hub until
   * the auth_id is attributed (dispatcher, delivery-attribution.ts; docs/reference/version-mapping.md).
   */
  readonly emspNamedBy?: 'cdr_token';
  /**
   * An eMSP's object for CPOs whose event names no CPO (no OCPI-to), or the hub (a Broadcast Push,
   * transport_and_format.asciidoc, Message Routing), goes to every CPO with an active routing rule to
   * the eMSP that implements the receiverModule (mod_tokens.asciidoc, Receiver interface): the store
   * makes one row per receiving CPO, keyed by the id upper-cased (a CiString, types.asciidoc;
   * @hub/store token-rows.ts).
   */
  readonly toEveryRoutedCpo?: true;
  /**
   * What a PATCH of its object is merged into before it is delivered as the full object (by `method`):
   * 'owners-object', the newest full object its owner pushed, whichever eMSP's row holds it, as a
   * Session PATCH is (mod_sessions.asciidoc, PATCH Method; @hub/core session-fold.ts); 'recipients-row',
   * the full object the receiving party's row holds, as a Token PATCH is (mod_tokens.asciidoc, Receiver
   * interface, PATCH Method; @hub/core token-fold.ts). Unset: its events are never PATCHes.
   */
  readonly patchMergesInto?: 'owners-object' | 'recipients-row';
}

/**
 * A driver's personal data in a module's events (docs/decisions/0013-erasure-by-destroying-data-keys.md):
 * sealed under the data key of the driver's token on its change topic and, if it has a read model, on
 * its snapshot topic too (which holds the objects whole: docs/decisions/0014-snapshot-topics.md);
 * overwritten with the placeholder in the plain copies in Postgres once the key is destroyed.
 */
export interface PersonalDataRule {
  /**
   * The object its events carry, as erasure names it: a delivery row's kind for a token, session or
   * CDR ('token', 'session', 'cdr'), 'command' for a command request.
   */
  readonly object: string;
  /**
   * Where the driver's token is. 'subject': the objects are drivers' Tokens themselves
   * (mod_tokens.asciidoc, Token object), named by the events' subject CC/PID/uid|TYPE, so the subject
   * and the Kafka key name the token by its data key's id instead and the plain subject is sealed.
   * Otherwise the path in an event's data of the Token or CdrToken it carries (eMSP country_code,
   * party_id, uid, and type: RFID if absent); the subject and key name another object and stay.
   */
  readonly driverToken: 'subject' | readonly string[];
  /**
   * The personal fields, as paths in the canonical (OCPI 2.2.1) object, in the order their plain
   * values are sealed. A field added later is sealed in events written after it only.
   */
  readonly fields: ReadonlyArray<ReadonlyArray<string>>;
}

/**
 * The GET the partner check (docs/how-to/partner-check.md) probes a partner's receiver of this module
 * with: the receiver's own GET of one object (Receiver interface, GET, of the module's chapter), for an
 * object no partner has, so nothing is stored and a well-formed "unknown object" answer passes.
 */
export interface ReceiverProbeRule {
  /** The path after the receiver's URL; `hub` is the hub's own party, the sender in object paths. */
  path(hub: { readonly countryCode: string; readonly partyId: string }, objectId: string): string;
  /**
   * false: the receiver has no GET and any other method would act (mod_commands.asciidoc), so the
   * probe checks reachability only and any HTTP answer passes.
   */
  readonly answersWithEnvelope?: false;
}

export interface OcpiModule {
  /** The OCPI module identifier (version_information_endpoint.asciidoc, ModuleID). */
  readonly id: string;
  readonly topic: TopicId;
  readonly eventTypes: Readonly<Record<string, string>>;
  /**
   * The Kafka key: 'object' is country_code/party_id/id upper-cased (objectKey: every event of one
   * object on one partition, in order); 'command' is the hub's command id; 'registry' is the registry
   * topic's (CC/PID/ROLE of a party, or the platform id of a platform-wide change).
   */
  readonly key: 'object' | 'command' | 'registry';
  /**
   * The role whose party owns and pushes the objects (transport_and_format.asciidoc, Client Owned
   * Object Push); 'HUB' for the hub's own (mod_hub_client_info.asciidoc: "Data owner: Hub").
   */
  readonly owner: 'CPO' | 'EMSP' | 'HUB';
  /**
   * Who else sees them: 'routed' are the parties of the other role with an active routing rule to the
   * owner (list pulls); 'recipient' is the one party the event names (its ocpi-to header).
   */
  readonly visibility: 'routed' | 'recipient';
  /** The error for an unknown object: on a pull (detail GET), and on a push that needs it to exist. */
  readonly notFound: { readonly pull: HubErrorKind; readonly push: HubErrorKind };
  /** Where and how partners reach it: endpoints per OCPI version and routes (route-spec.ts). */
  readonly http: ModuleHttp;
  /** The topics it owns (its events, and its snapshot if it has a read model); infra/topics.json is made from these. */
  readonly topics: readonly TopicDefinition[];
  readonly projection?: ProjectionRule;
  readonly delivery?: DeliveryRule;
  /** A module that delivers more than one kind (chargingprofiles: results and ActiveChargingProfile updates). */
  readonly moreDeliveries?: readonly DeliveryRule[];
  /** The driver's personal data its events carry, if any. */
  readonly personalData?: PersonalDataRule;
  /** How the partner check probes a partner's receiver of it, if partners serve one. */
  readonly receiverProbe?: ReceiverProbeRule;
}

/** A registered endpoint URL without its trailing slashes, for the delivery URL built on it. */
export const stripSlashes = (url: string): string => url.replace(/\/+$/, '');
