import { isoInstant } from '@hub/ocpi';

/**
 * An ISO 8601 time as UTC with milliseconds, as Postgres reads it whatever the host's time zone; null
 * for anything else (not ISO 8601, not a real instant, outside years 1 to 9999, or without a zone when
 * `zoneless` is 'refuse'). With 'utc', a time without a zone is UTC, as an OCPI DateTime is
 * (types.asciidoc). Values that reach SQL from events of any producer go through here, so none can
 * fail a statement; it reads times exactly as the schema layer's DateTime format does (isoInstant).
 */
export function utcTime(value: unknown, zoneless: 'utc' | 'refuse'): string | null {
  if (typeof value !== 'string') return null;
  const ms = isoInstant(value, zoneless);
  return ms === undefined ? null : new Date(ms).toISOString();
}
