import { mergePatch } from './merge-patch.ts';

// How a Session PATCH changes the full Session the hub holds (mod_sessions.asciidoc, PATCH Method):
// the one PATCH rule (mergePatch: carried fields replace, absent stay, null removes), except
// charging_periods: "this SHALL be processed as a request to add all the ChargingPeriod objects to the
// existing Session object. If the request charging_periods list is omitted (or contains an empty
// list), no changes SHALL be made to the existing list". Replacing or removing periods takes a PUT
// (same section), so a PATCH never shortens the list: null is treated as "no change" here (the ingress
// refuses it before it is appended).

type Json = Record<string, unknown>;

export function mergeSessionPatch(stored: Json, patch: Json): Json {
  const { charging_periods: added, ...rest } = patch;
  const merged = mergePatch(stored, rest);
  if (Array.isArray(added) && added.length > 0) {
    const existing = Array.isArray(stored['charging_periods']) ? (stored['charging_periods'] as unknown[]) : [];
    merged['charging_periods'] = [...existing, ...(added as unknown[])];
  }
  return merged;
}
