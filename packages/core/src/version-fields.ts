// The one hub-private member of a canonical object (docs/decisions/0008-one-canonical-form-translated-at-the-edge.md):
// its shape and how a PATCH merges it, which the PATCH rule (merge-patch.ts) needs. Reading and writing
// it per version is the translation layer's (@hub/versions, version-fields.ts).
import type { OcpiVersion } from '@hub/ocpi';

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

/**
 * The stored reserved member after a PATCH that carries one. A PATCH replaces the top-level fields it
 * carries (mod_locations.asciidoc, PATCH Method), but this member holds several fields' data: it is
 * merged one level deeper, per version: each kept or derived member replaces the stored one, and null
 * removes it together with the members under it (a dotted path: null at `evses.E1` removes
 * `evses.E1.parking`, so a PUT of that EVSE replaces what was kept of it). Removals go first, so a
 * PATCH may clear a path and set members under it again.
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
  const entries = Object.entries(patch ?? {});
  for (const [name, value] of entries) {
    if (value !== null) continue;
    for (const key of Object.keys(out)) if (key === name || key.startsWith(`${name}.`)) delete out[key];
  }
  for (const [name, value] of entries) if (value !== null) out[name] = value;
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * The members of `fields` under a dotted path, moved to the top: what was kept of an EVSE inside its
 * Location (`evses.E1.parking`), as the EVSE's own (`parking`), for a reader of the EVSE alone.
 */
export function versionFieldsUnder(fields: VersionFieldsByVersion | undefined, path: string): VersionFieldsByVersion | undefined {
  if (!fields) return undefined;
  const out: Record<string, VersionFields> = {};
  for (const [version, byVersion] of Object.entries(fields) as Array<[string, VersionFields | undefined]>) {
    const kept = membersUnder(byVersion?.kept, path);
    const derived = membersUnder(byVersion?.derived, path) as Record<string, true> | undefined;
    if (kept || derived) out[version] = compact({ kept, derived });
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The reverse of versionFieldsUnder: an EVSE's own members put under its path in the Location's. */
export function versionFieldsAt(fields: VersionFieldsByVersion | undefined, path: string): VersionFieldsByVersion | undefined {
  if (!fields) return undefined;
  const out: Record<string, VersionFields> = {};
  for (const [version, byVersion] of Object.entries(fields) as Array<[string, VersionFields | undefined]>) {
    const prefixed = (members: Readonly<Record<string, unknown>> | undefined) =>
      members && Object.keys(members).length > 0 ? Object.fromEntries(Object.entries(members).map(([name, value]) => [`${path}.${name}`, value])) : undefined;
    const kept = prefixed(byVersion?.kept);
    const derived = prefixed(byVersion?.derived) as Record<string, true | null> | undefined;
    if (kept || derived) out[version] = compact({ kept, derived });
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

function membersUnder(members: Readonly<Record<string, unknown>> | undefined, path: string): Record<string, unknown> | undefined {
  if (!members) return undefined;
  const prefix = `${path}.`;
  const out = Object.fromEntries(Object.entries(members).filter(([name]) => name.startsWith(prefix)).map(([name, value]) => [name.slice(prefix.length), value]));
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The object without its undefined members (so a translated object equals the one sent, member for member). */
export function compact<T extends object>(object: T): T {
  for (const key of Object.keys(object)) if ((object as Record<string, unknown>)[key] === undefined) delete (object as Record<string, unknown>)[key];
  return object;
}
