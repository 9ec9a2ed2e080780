import { topics } from '@hub/events';
import type { OcpiModule, PersonalDataRule } from './module-rules.ts';
import { ocpiModules, type ModuleId } from './modules.ts';

export type { PersonalDataRule } from './module-rules.ts';

// Drivers' personal data as the modules declare it (module-rules.ts, PersonalDataRule): what the
// driver-data event log seals and opens, which fields erasure overwrites, without naming a module
// (docs/decisions/0013-erasure-by-destroying-data-keys.md, docs/decisions/0016-a-module-is-one-folder.md).

/** The objects whose personal fields are sealed and erased ('token', 'session', 'cdr', 'command'). */
export type PersonalObjectKind = { [K in ModuleId]: (typeof ocpiModules)[K] extends { personalData: { object: infer O extends string } } ? O : never }[ModuleId];

/** A module's rule, its object named as the sealing functions of @hub/registry take it. */
export type DeclaredPersonalData = PersonalDataRule & { readonly object: PersonalObjectKind };

const declaring = (Object.values(ocpiModules) as OcpiModule[]).flatMap((module) => (module.personalData ? [{ module, rule: module.personalData as DeclaredPersonalData }] : []));

/** Its change topic carries a module's personal data, and so does its snapshot topic: it holds the objects whole (decision 0014). */
const byTopic = new Map<string, DeclaredPersonalData>(
  declaring.flatMap(({ module, rule }) => [module.topic, ...(module.projection ? [module.projection.snapshot.topic] : [])].map((t) => [topics[t], rule] as const)),
);

const byObject = new Map<string, DeclaredPersonalData>(declaring.map(({ rule }) => [rule.object, rule]));

/** The personal data a logical topic's events carry, or undefined for a topic without any. */
export function personalDataOnTopic(topic: string): DeclaredPersonalData | undefined {
  return byTopic.get(topic);
}

/** The personal data of a module's objects, or undefined for a module without any. */
export function personalDataOf(id: ModuleId): DeclaredPersonalData | undefined {
  return (ocpiModules[id] as OcpiModule).personalData as DeclaredPersonalData | undefined;
}

/** The personal fields of an object, as paths in its canonical form. Throws for a name no module declares (a caller's bug). */
export function personalFieldsOf(object: PersonalObjectKind): ReadonlyArray<ReadonlyArray<string>> {
  const rule = byObject.get(object);
  if (!rule) throw new Error(`no personal data declared for ${String(object)}`);
  return rule.fields;
}
