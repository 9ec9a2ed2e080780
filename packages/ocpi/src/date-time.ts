// One reading of ISO 8601 times for every place a time from a partner or an event is parsed: the
// schema layer's OCPI DateTime format, the times that reach SQL (store utcTime) and the date_from /
// date_to query parameters. A time without a zone designator is UTC (types.asciidoc, DateTime: "All
// timestamps are formatted as string(25) following RFC 3339, with some additional limitations. All
// timestamps SHALL be in UTC").

const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(Z|[+-]\d{2}:\d{2})?$/;

/** The forms of an OCPI DateTime the hub accepts: with or without Z or an explicit +00:00, with or without a fraction. */
const OCPI_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|\+00:00)?$/;

const leap = (year: number): boolean => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
const daysIn = (year: number, month: number): number => (month === 2 ? (leap(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31);

/**
 * Milliseconds since the epoch of an ISO 8601 time, or undefined when it is not one or names no real
 * instant: month 13, February 30, hour 24, second 60 (JavaScript, and so every Node consumer, cannot
 * read a leap second), year 0000, or an instant outside years 1 to 9999 once its offset is applied
 * (what Postgres and every JSON consumer can hold). Without a zone: UTC, or undefined when `zoneless`
 * is 'refuse'. Never rolls over (V8 reads 2026-02-30 as March 2).
 */
export function isoInstant(value: string, zoneless: 'utc' | 'refuse' = 'utc'): number | undefined {
  const m = ISO_TIME.exec(value);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const zone = m[7];
  if (!zone && zoneless === 'refuse') return undefined;
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || second > 59) return undefined;
  const ms = Date.parse(zone ? value : `${value}Z`);
  if (Number.isNaN(ms)) return undefined;
  const utcYear = new Date(ms).getUTCFullYear();
  return utcYear < 1 || utcYear > 9999 ? undefined : ms;
}

/** An OCPI DateTime as the hub accepts it (README, What the hub accepts beyond the strict letter). */
export function isOcpiDateTime(value: string): boolean {
  return OCPI_DATE_TIME.test(value) && isoInstant(value) !== undefined;
}
