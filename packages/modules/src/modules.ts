import { registryTopicDefinition, topics, type TopicDefinition } from '@hub/events';
import type { OcpiVersion } from '@hub/ocpi';
import type { DeliveryKind, ReadModel } from '@hub/core';
import type { DeliveryRule, OcpiModule, ProjectionRule } from './module-rules.ts';
import { locationsModule } from './locations/module.ts';
import { tariffsModule } from './tariffs/module.ts';
import { sessionsModule } from './sessions/module.ts';
import { cdrsModule } from './cdrs/module.ts';
import { commandsModule } from './commands/module.ts';
import { chargingProfilesModule } from './chargingprofiles/module.ts';
import { tokensModule } from './tokens/module.ts';
import { hubClientInfoModule } from './hubclientinfo/module.ts';

export type { DeliveredObject, DeliveryRule, DeliveryTranslation, OcpiModule, ProjectionRule } from './module-rules.ts';

// The module table: one folder per OCPI module the hub carries (docs/explanation/architecture.md, OCPI modules; decision 0016), each
// declaring its HTTP surface, topics, events, read model and deliveries. Whatever differs between
// modules is a field of its declaration; the ingress (mounts, version details, API catalogue), the
// projector, the read-model store, the dispatcher, hubctl and infra/topics.json read this table
// instead of branching on a module's name. A new module is a folder and a line here (plus its route
// handlers, schemas and, for a new read model, its table). The shape of an entry is in module-rules.ts.

// In the order version details list them.
export const ocpiModules = {
  hubclientinfo: hubClientInfoModule,
  locations: locationsModule,
  tariffs: tariffsModule,
  sessions: sessionsModule,
  cdrs: cdrsModule,
  tokens: tokensModule,
  commands: commandsModule,
  chargingprofiles: chargingProfilesModule,
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

/**
 * The delivery kinds whose rule says `what`, as SQL literals for a statement of the store (`'session',
 * 'cdr'`): names from the table, never input; `null` when none does, so `kind in (null)` matches nothing.
 */
export function kindsWhere(what: (rule: DeliveryRule, module: OcpiModule) => boolean): string {
  return deliveredKinds.filter((kind) => what(deliveryRuleOf(kind), moduleOfDelivery(kind))).map((kind) => `'${kind}'`).join(', ') || 'null';
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

/** The modules served to partners of `version`, in table order (version details, mounts, API catalogue). */
export function modulesServedIn(version: OcpiVersion): readonly OcpiModule[] {
  return (Object.values(ocpiModules) as OcpiModule[]).filter((m) => m.http.endpoints[version] !== undefined);
}

/**
 * Every topic the hub uses, as infra/topics.json holds them (infra/generate-topics.ts writes it): the
 * modules' own, then the registry's. Each module's topic appears once whichever modules read it.
 */
export function topicDefinitions(): TopicDefinition[] {
  const owned = (Object.values(ocpiModules) as OcpiModule[]).flatMap((m) => m.topics);
  const events = owned.filter((d) => d.config['cleanup.policy'] !== 'compact');
  const snapshots = owned.filter((d) => d.config['cleanup.policy'] === 'compact');
  return [...events, ...snapshots, registryTopicDefinition];
}

/**
 * The role whose parties receive a module's objects: the other role than the one that owns and pushes
 * them (transport_and_format.asciidoc, Client Owned Object Push: an eMSP receives a CPO's locations,
 * a CPO an eMSP's tokens and commands). Undefined for a module the table does not hold or the hub owns.
 */
export function receivingRoleOf(identifier: string): 'CPO' | 'EMSP' | undefined {
  // The identifier comes from a partner's version details: an own property only ("toString" is none).
  if (!Object.hasOwn(ocpiModules, identifier)) return undefined;
  const module = (ocpiModules as Record<string, OcpiModule>)[identifier];
  if (module === undefined || module.owner === 'HUB') return undefined;
  return module.owner === 'CPO' ? 'EMSP' : 'CPO';
}
