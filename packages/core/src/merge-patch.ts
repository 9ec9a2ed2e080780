// How a PATCH changes a stored OCPI object, for every module that takes PATCH (mod_locations.asciidoc
// and mod_sessions.asciidoc, PATCH Method: the fields a PATCH carries replace the stored ones, the
// others stay). A field a PATCH carries as null is removed: OCPI cardinality lets an optional field be
// absent or null with one meaning (terminology.asciidoc, Cardinality), so "replace with null" leaves it
// absent, as in JSON Merge Patch (RFC 7396). Only the top level merges: a nested object or list the
// PATCH carries replaces the stored one whole. Whether a field may be nulled (not a required one) is
// the schema layer's decision, made before the event is appended.
//
// The one exception is the hub-private member that keeps what another OCPI version sent: it holds
// several fields' data and merges a level deeper (version-fields.ts, mergeVersionFields;
// docs/decisions/0008-one-canonical-form-translated-at-the-edge.md).
import { HUB_VERSION_FIELDS, mergeVersionFields, type VersionFieldsByVersion } from './version-fields.ts';

type Json = Record<string, unknown>;

export function mergePatch(stored: Json, patch: Json): Json {
  const merged: Json = { ...stored };
  for (const [field, value] of Object.entries(patch)) {
    if (field === HUB_VERSION_FIELDS) {
      const fields = mergeVersionFields(stored[field] as VersionFieldsByVersion | undefined, value as VersionFieldsByVersion | null);
      if (fields) merged[field] = fields;
      else delete merged[field];
    } else if (value === null) delete merged[field];
    else merged[field] = value;
  }
  return merged;
}
