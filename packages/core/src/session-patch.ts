import { mergePatch } from './merge-patch.ts';
import { HUB_VERSION_FIELDS, type VersionFieldsByVersion } from './version-fields.ts';

// How a Session PATCH changes the full Session the hub holds (mod_sessions.asciidoc, PATCH Method):
// the one PATCH rule (mergePatch: carried fields replace, absent stay, null removes), except
// charging_periods: "this SHALL be processed as a request to add all the ChargingPeriod objects to the
// existing Session object. If the request charging_periods list is omitted (or contains an empty
// list), no changes SHALL be made to the existing list". Replacing or removing periods takes a PUT
// (same section), so a PATCH never shortens the list: null is treated as "no change" here (the ingress
// refuses it before it is appended).

// OCPI 2.1.1 has no such rule: a PATCH is "the same as the PUT method, but only the fields/objects that
// have to be updated have to be present" (ocpi-2.1.1/mod_sessions.md 2.2.3), so a 2.1.1 CPO's
// charging_periods replace the list (one that re-sends the whole list would otherwise have every period
// counted twice). The 2.1.1 edge keeps the list a PATCH carried, or null when it translated without
// loss, in hub_version_fields['2.1.1'].kept.charging_periods (packages/versions/src/v2.1.1/sessions.ts):
// that member says the PATCH came from a 2.1.1 CPO.

type Json = Record<string, unknown>;

/** Whether the PATCH's charging_periods replace the stored list: a 2.1.1 CPO's (above). */
function replacesPeriods(patch: Json): boolean {
  const fields = patch[HUB_VERSION_FIELDS] as VersionFieldsByVersion | undefined;
  const kept = fields?.['2.1.1']?.kept;
  return kept !== undefined && Object.hasOwn(kept, 'charging_periods');
}

export function mergeSessionPatch(stored: Json, patch: Json): Json {
  const { charging_periods: added, ...rest } = patch;
  const merged = mergePatch(stored, rest);
  if (Array.isArray(added) && replacesPeriods(patch)) merged['charging_periods'] = added;
  else if (Array.isArray(added) && added.length > 0) {
    const existing = Array.isArray(stored['charging_periods']) ? (stored['charging_periods'] as unknown[]) : [];
    merged['charging_periods'] = [...existing, ...(added as unknown[])];
  }
  return merged;
}
