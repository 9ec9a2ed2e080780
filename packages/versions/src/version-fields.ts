// The one hub-private member of a canonical object: what a partner of another version sent that the
// canonical (2.2.1) object has no field for, and which canonical fields the hub derived because that
// version has none. Every serializer to 2.2.1 removes it; the sender's version's serializer reads it
// to give back what was sent (docs/decisions/0008-one-canonical-form-translated-at-the-edge.md).
import { compact, HUB_VERSION_FIELDS, type TranslatedVersion, type VersionFields, type VersionFieldsByVersion } from '@hub/core';

export { compact, HUB_VERSION_FIELDS, mergeVersionFields, type TranslatedVersion, type VersionFields, type VersionFieldsByVersion } from '@hub/core';

/** A canonical object that may carry the reserved member. */
export type WithVersionFields<T> = T & { hub_version_fields?: VersionFieldsByVersion };

/** The reserved member of one version, when present. */
export function versionFields(object: object, version: TranslatedVersion): VersionFields | undefined {
  const all = (object as { hub_version_fields?: VersionFieldsByVersion }).hub_version_fields;
  return all?.[version];
}

/**
 * The object without the reserved member: the same object when it has none (no copy: this runs on every
 * pull and delivery), else a shallow copy without it. Only top-level objects carry the member (Location,
 * Session, CDR), so nothing nested is looked at.
 */
export function withoutVersionFields<T extends object>(object: T): T {
  if (!(HUB_VERSION_FIELDS in object)) return object;
  const { [HUB_VERSION_FIELDS]: _dropped, ...rest } = object as T & { hub_version_fields?: unknown };
  return rest as T;
}

/** The reserved member for one version, or undefined when there is nothing to keep. */
export function fieldsFor(version: TranslatedVersion, kept: Record<string, unknown>, derived: Record<string, true | null>): VersionFieldsByVersion | undefined {
  const k = Object.keys(kept).length > 0 ? kept : undefined;
  const d = Object.keys(derived).length > 0 ? derived : undefined;
  return k || d ? { [version]: compact({ kept: k, derived: d }) } : undefined;
}

/** A list with at least one item (a '+' field, terminology.asciidoc Cardinality), as the generated types spell it. */
export type NonEmpty<T> = [T, ...T[]];

/** The list as NonEmpty, for a list known to have an item (a map of a NonEmpty, or one checked). */
export const nonEmpty = <T>(list: T[]): NonEmpty<T> => list as NonEmpty<T>;
