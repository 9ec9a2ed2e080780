// The one hub-private member of a canonical object: what a partner of another version sent that the
// canonical (2.2.1) object has no field for, and which canonical fields the hub derived because that
// version has none. Every serializer to 2.2.1 removes it; the sender's version's serializer reads it
// to give back what was sent (docs/decisions/0008-one-canonical-form-translated-at-the-edge.md).
import type { OcpiVersion } from './version.ts';

export const HUB_VERSION_FIELDS = 'hub_version_fields';

export interface VersionFields {
  /** Members as the partner sent them, by their name in that version, e.g. { type: 'OTHER' } of a 2.1.1 Location. */
  readonly kept?: Readonly<Record<string, unknown>>;
  /** Canonical members (dotted paths) the hub filled in because that version has no such field, e.g. 'time_zone'. */
  readonly derived?: Readonly<Record<string, true | null>>;
}

/** The versions whose partners' objects may carry the member: every version but the canonical one (2.3.0 before it is an OcpiVersion a party may use). */
export type TranslatedVersion = Exclude<OcpiVersion, '2.2.1'> | '2.3.0';

export type VersionFieldsByVersion = Partial<Record<TranslatedVersion, VersionFields>>;

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

/**
 * The stored reserved member after a PATCH that carries one. A PATCH replaces the top-level fields it
 * carries (mod_locations.asciidoc, PATCH Method), but this member holds several fields' data: it is
 * merged one level deeper, per version: each kept or derived member replaces the stored one, and null
 * removes it.
 */
export function mergeVersionFields(stored: VersionFieldsByVersion | undefined, patch: VersionFieldsByVersion | null | undefined): VersionFieldsByVersion | undefined {
  if (patch === undefined) return stored;
  if (patch === null) return undefined;
  const out: Record<string, VersionFields> = { ...stored };
  for (const [version, fields] of Object.entries(patch) as Array<[string, VersionFields | undefined]>) {
    if (!fields) continue;
    const before = out[version] ?? {};
    const kept = mergeMembers(before.kept, fields.kept);
    const derived = mergeMembers(before.derived, fields.derived) as Record<string, true> | undefined;
    if (kept || derived) out[version] = compact({ kept, derived });
    else delete out[version];
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

function mergeMembers(stored: Readonly<Record<string, unknown>> | undefined, patch: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = { ...stored };
  for (const [name, value] of Object.entries(patch ?? {})) {
    if (value === null) delete out[name];
    else out[name] = value;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The reserved member for one version, or undefined when there is nothing to keep. */
export function fieldsFor(version: TranslatedVersion, kept: Record<string, unknown>, derived: Record<string, true | null>): VersionFieldsByVersion | undefined {
  const k = Object.keys(kept).length > 0 ? kept : undefined;
  const d = Object.keys(derived).length > 0 ? derived : undefined;
  return k || d ? { [version]: compact({ kept: k, derived: d }) } : undefined;
}

/** The object without its undefined members (so a translated object equals the one sent, member for member). */
export function compact<T extends object>(object: T): T {
  for (const key of Object.keys(object)) if ((object as Record<string, unknown>)[key] === undefined) delete (object as Record<string, unknown>)[key];
  return object;
}

/** A list with at least one item (a '+' field, terminology.asciidoc Cardinality), as the generated types spell it. */
export type NonEmpty<T> = [T, ...T[]];

/** The list as NonEmpty, for a list known to have an item (a map of a NonEmpty, or one checked). */
export const nonEmpty = <T>(list: T[]): NonEmpty<T> => list as NonEmpty<T>;
