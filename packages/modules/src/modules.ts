import { cdrEventTypes, chargingProfileEventTypes, commandEventTypes, locationEventTypes, registryEventTypes, sessionEventTypes, tariffEventTypes, tokenEventTypes, topics } from '@hub/events';
import { applyLocationEvent, applyTariffEvent, applyTokenEvent, findInLocation } from './apply.ts';
import { splitTokenObjectId, tokenObjectId } from './token-id.ts';
import type { DeliveryKind, ReadModel } from '@hub/core';
import type { DeliveryRule, OcpiModule, ProjectionRule } from './module-rules.ts';

export type { DeliveredObject, DeliveryRule, OcpiModule, ProjectionRule } from './module-rules.ts';

// The module table: one declaration per OCPI object the hub carries. Whatever differs
// between modules is a field here; the projector, the read-model store, the dispatcher, the ingress
// routes and hubctl read it instead of branching on a module's name. A new module is one entry (plus
// its routes, schemas and, for a new read model, its table). The shape of an entry is in module-rules.ts.

const stripSlashes = (url: string): string => url.replace(/\/+$/, '');
const stringMember = (document: Record<string, unknown>, name: string): string | undefined => {
  const value = document[name];
  return typeof value === 'string' ? value : undefined;
};

export const ocpiModules = {
  // mod_locations.asciidoc: CPO-owned, pulled by eMSPs (list and detail), PATCHed at three levels.
  locations: {
    id: 'locations',
    topic: 'locations',
    eventTypes: locationEventTypes,
    key: 'object',
    owner: 'CPO',
    visibility: 'routed',
    notFound: { pull: 'UNKNOWN_LOCATION', push: 'UNKNOWN_LOCATION_PUSH' },
    projection: {
      table: 'locations',
      evolve: applyLocationEvent,
      replacesWholeObject: (type) => type === locationEventTypes.locationPut,
      find: findInLocation,
      listBudget: 'locations-list',
      objectId: (document) => stringMember(document, 'id'),
    },
  },
  // mod_tariffs.asciidoc: CPO-owned, pulled by eMSPs; PUT and DELETE only.
  tariffs: {
    id: 'tariffs',
    topic: 'tariffs',
    eventTypes: tariffEventTypes,
    key: 'object',
    owner: 'CPO',
    visibility: 'routed',
    notFound: { pull: 'UNKNOWN_TARIFF', push: 'UNKNOWN_TARIFF' },
    projection: {
      table: 'tariffs',
      evolve: (stored, type, _path, data) => applyTariffEvent(stored, type, data),
      replacesWholeObject: (type) => type === tariffEventTypes.tariffPut,
      find: (document) => document,
      objectId: (document) => stringMember(document, 'id'),
    },
  },
  // mod_sessions.asciidoc: pushed by the CPO, delivered to the eMSP of its cdr_token. Interface
  // document, Receiver endpoints: PUT {receiver}/{cpo cc}/{cpo pid}/{session id}, always the full
  // latest state.
  sessions: {
    id: 'sessions',
    topic: 'sessions',
    eventTypes: sessionEventTypes,
    key: 'object',
    owner: 'CPO',
    visibility: 'recipient',
    notFound: { pull: 'UNKNOWN_SESSION', push: 'UNKNOWN_SESSION' },
    delivery: {
      kind: 'session',
      receiverModule: 'sessions',
      recipient: 'EMSP',
      method: 'PUT',
      url: (receiverUrl, { cpo, objectId }) => `${stripSlashes(receiverUrl)}/${cpo.countryCode}/${cpo.partyId}/${encodeURIComponent(objectId)}`,
      keeps: 'newest',
    },
  },
  // mod_cdrs.asciidoc: posted by the CPO, delivered to the eMSP of its cdr_token: POST {receiver}.
  cdrs: {
    id: 'cdrs',
    topic: 'cdrs',
    eventTypes: cdrEventTypes,
    key: 'object',
    owner: 'CPO',
    visibility: 'recipient',
    notFound: { pull: 'NOT_FOUND', push: 'NOT_FOUND' },
    delivery: { kind: 'cdr', receiverModule: 'cdrs', recipient: 'EMSP', method: 'POST', url: (receiverUrl) => stripSlashes(receiverUrl), keeps: 'every' },
  },
  // mod_commands.asciidoc: requested by the eMSP, forwarded to the CPO; the CommandResult goes to the
  // response_url the eMSP gave (the delivery's fixed URL), as POST.
  commands: {
    id: 'commands',
    topic: 'commands',
    eventTypes: commandEventTypes,
    key: 'command',
    owner: 'EMSP',
    visibility: 'recipient',
    notFound: { pull: 'NOT_FOUND', push: 'NOT_FOUND' },
    delivery: { kind: 'command_result', receiverModule: 'commands', recipient: 'EMSP', method: 'POST', url: (responseUrl) => responseUrl, keeps: 'every' },
  },
  // mod_charging_profiles.asciidoc: set, get and clear requested by the eMSP of a session and forwarded
  // to its CPO; the CPO's result goes to the response_url the eMSP gave (POST), like a CommandResult.
  // The CPO's updated ActiveChargingProfile of a session (Sender interface, PUT) goes to the session's
  // eMSP at PUT {sender}/{session_id}; a row holds the newest by start_date_time (the time the Charge
  // Point calculated it), so an older update never overwrites a newer one.
  chargingprofiles: {
    id: 'chargingprofiles',
    topic: 'chargingProfiles',
    eventTypes: chargingProfileEventTypes,
    key: 'command',
    owner: 'EMSP',
    visibility: 'recipient',
    notFound: { pull: 'UNKNOWN_SESSION', push: 'UNKNOWN_SESSION' },
    delivery: { kind: 'charging_profile_result', receiverModule: 'chargingprofiles', recipient: 'EMSP', method: 'POST', url: (responseUrl) => responseUrl, keeps: 'every' },
    moreDeliveries: [
      {
        kind: 'active_charging_profile',
        receiverModule: 'chargingprofiles',
        interfaceRole: 'SENDER',
        recipient: 'EMSP',
        method: 'PUT',
        url: (senderUrl, { objectId }) => `${stripSlashes(senderUrl)}/${encodeURIComponent(objectId)}`,
        keeps: 'newest',
      },
    ],
  },
  // mod_tokens.asciidoc: eMSP-owned; pushed by the eMSP (PUT, PATCH), pulled by routed CPOs
  // and delivered to them (Receiver interface: PUT {receiver}/{emsp cc}/{emsp pid}/{uid}?type=), each
  // CPO the newest full token (a PATCH is merged first). The object id is "uid|TYPE" (token-id.ts).
  tokens: {
    id: 'tokens',
    topic: 'tokens',
    eventTypes: tokenEventTypes,
    key: 'object',
    owner: 'EMSP',
    visibility: 'routed',
    notFound: { pull: 'UNKNOWN_TOKEN', push: 'UNKNOWN_TOKEN' },
    projection: {
      table: 'tokens',
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
      url: (receiverUrl, { emsp, objectId, payload }) => {
        // The uid as the eMSP wrote it (the row's id is upper-cased: a CiString, types.asciidoc).
        const key = splitTokenObjectId(objectId);
        const uid = typeof payload['uid'] === 'string' ? payload['uid'] : key.uid;
        const type = typeof payload['type'] === 'string' ? payload['type'] : key.type;
        return `${stripSlashes(receiverUrl)}/${emsp.countryCode}/${emsp.partyId}/${encodeURIComponent(uid)}?type=${encodeURIComponent(type)}`;
      },
      keeps: 'newest',
    },
  },
  // mod_hub_client_info.asciidoc: the hub's own objects, one per party, made from the
  // registry's events (dispatcher, registry-consumer.ts) and pushed to every connected party with a
  // routing rule with that party (Push model). Receiver interface: PUT {receiver}/{country_code}/{party_id}
  // of the ClientInfo; a row's object id is "CC/PID/ROLE" and its recipient either role ('row').
  hubclientinfo: {
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
    delivery: {
      kind: 'client_info',
      receiverModule: 'hubclientinfo',
      recipient: 'row',
      method: 'PUT',
      url: (receiverUrl, { payload }) => `${stripSlashes(receiverUrl)}/${encodeURIComponent(String(payload['country_code']))}/${encodeURIComponent(String(payload['party_id']))}`,
      keeps: 'newest',
      route: 'rule',
      routingHeaders: false,
    },
  },
} as const satisfies Record<string, OcpiModule>;

export type ModuleId = keyof typeof ocpiModules;

/** The modules with a read model in Postgres (the projector's and `hubctl readmodel rebuild`'s). */
export type ProjectedModuleId = { [K in ModuleId]: (typeof ocpiModules)[K] extends { projection: ProjectionRule } ? K : never }[ModuleId];
/** @hub/core names the read models (ReadModel) without this table: both must be the same modules. */
const _sameReadModels: [ProjectedModuleId, ReadModel] extends [ReadModel, ProjectedModuleId] ? true : never = true;

export const projectedModules: readonly ProjectedModuleId[] = (Object.keys(ocpiModules) as ModuleId[]).filter(
  (id): id is ProjectedModuleId => (ocpiModules[id] as OcpiModule).projection !== undefined,
);

export function isProjectedModule(id: string): id is ProjectedModuleId {
  return (projectedModules as readonly string[]).includes(id);
}

/** The projection rule of a read model. Throws for a name outside the table (a caller's bug). */
export function projectionOf(id: ProjectedModuleId): ProjectionRule {
  const rule = (ocpiModules[id] as OcpiModule | undefined)?.projection;
  if (!rule) throw new Error(`no read model ${String(id)}`);
  return rule;
}

/** The logical topic of a module. */
export function topicOf(id: ModuleId): string {
  return topics[ocpiModules[id].topic];
}

/** The delivered modules, by what the dispatcher records them as. */
const deliveredBy = new Map<DeliveryKind, { module: OcpiModule; delivery: DeliveryRule }>(
  Object.values(ocpiModules as Record<string, OcpiModule>).flatMap((m) =>
    [...(m.delivery ? [m.delivery] : []), ...(m.moreDeliveries ?? [])].map((delivery) => [delivery.kind, { module: m, delivery }] as const),
  ),
);

/** The kinds of delivery records the table has rules for. */
export const deliveredKinds: readonly DeliveryKind[] = [...deliveredBy.keys()];

/** Whether the table has a delivery rule for `kind` (a row's kind comes from the database). */
export function isDeliveredKind(kind: string): kind is DeliveryKind {
  return deliveredBy.has(kind as DeliveryKind);
}

export function deliveryRuleOf(kind: DeliveryKind): DeliveryRule {
  const entry = deliveredBy.get(kind);
  if (!entry) throw new Error(`no delivery rule for ${kind}`);
  return entry.delivery;
}

/** The module whose deliveries are recorded as `kind`. */
export function moduleOfDelivery(kind: DeliveryKind): OcpiModule {
  const entry = deliveredBy.get(kind);
  if (!entry) throw new Error(`no delivery rule for ${kind}`);
  return entry.module;
}

/**
 * The modules whose events the dispatcher's consumer turns into deliveries (a command result is
 * recorded by the ingress when the CPO posts it, not consumed from the topic).
 */
export const consumedDeliveryModules = ['sessions', 'cdrs', 'tokens'] as const satisfies readonly ModuleId[];

export type ConsumedDeliveryModuleId = (typeof consumedDeliveryModules)[number];

/**
 * The topics `hubctl deliveries replay --emsp` replays: those delivered to eMSPs. A CPO gets an eMSP's
 * tokens again from the read model (the dispatcher's re-send when it is routed), not by a replay.
 */
export const replayedToEmspModules = consumedDeliveryModules.filter((m) => ocpiModules[m].delivery.recipient === 'EMSP');

export function isReplayedToEmspModule(id: string): id is ConsumedDeliveryModuleId {
  return (replayedToEmspModules as readonly string[]).includes(id);
}

export function isConsumedDeliveryModule(id: string): id is ConsumedDeliveryModuleId {
  return (consumedDeliveryModules as readonly string[]).includes(id);
}
