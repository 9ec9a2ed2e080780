const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(Z|[+-]\d{2}:\d{2})?$/;

/**
 * An ISO 8601 time as UTC with milliseconds, as Postgres reads it whatever the host's time zone; null
 * for anything else (not ISO 8601, outside years 1 to 9999, or without a zone when `zoneless` is
 * 'refuse'). With 'utc', a time without a zone is UTC, as an OCPI DateTime is (types.asciidoc).
 * Values that reach SQL from events of any producer go through here, so none can fail a statement.
 */
export function utcTime(value: unknown, zoneless: 'utc' | 'refuse'): string | null {
  if (typeof value !== 'string') return null;
  const match = ISO_TIME.exec(value);
  if (!match || (!match[1] && zoneless === 'refuse')) return null;
  const at = new Date(match[1] ? value : `${value}Z`);
  const year = at.getUTCFullYear();
  return Number.isNaN(at.getTime()) || year < 1 || year > 9999 ? null : at.toISOString();
}
