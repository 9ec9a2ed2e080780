// One reading of ISO 8601 times for every place a time from a partner or an event is parsed: the
// schema layer's OCPI DateTime format, the times that reach SQL (store utcTime) and the date_from /
// date_to query parameters. A time without a zone designator is UTC (types.asciidoc, DateTime: "All
// timestamps are formatted as string(25) following RFC 3339, with some additional limitations. All
// timestamps SHALL be in UTC").

const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})?$/;

/** The forms of an OCPI DateTime the hub accepts: with or without Z or an explicit +00:00, with or without a fraction. */
const OCPI_DATE_TIME = /^(?!0000)\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,9})?(?:Z|\+00:00)?$/;

const leap = (year: number): boolean => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
const daysIn = (year: number, month: number): number => (month === 2 ? (leap(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31);

/**
 * Milliseconds since the epoch of an ISO 8601 time, or undefined when it is not one or names no real
 * instant: month 13, February 30, hour 24, second 60 (JavaScript, and so every Node consumer, cannot
 * read a leap second), year 0000, or an instant outside years 1 to 9999 once its offset is applied
 * (what Postgres and every JSON consumer can hold). Without a zone: UTC, or undefined when `zoneless`
 * is 'refuse'. Never rolls over (V8's Date.parse reads 2026-02-30 as March 2).
 */
export function isoInstant(value: string, zoneless: 'utc' | 'refuse' = 'utc'): number | undefined {
  const m = ISO_TIME.exec(value);
  if (!m) return undefined;
  const zone = m[8];
  if (!zone && zoneless === 'refuse') return undefined;
  const year = Number(m[1]);
  const month = Number(m[2]);
  if (!realDateTime(year, month, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]))) return undefined;
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, Number(m[3]));
  utc.setUTCHours(Number(m[4]), Number(m[5]), Number(m[6]), m[7] ? Number(`${m[7]}00`.slice(0, 3)) : 0);
  let ms = utc.getTime();
  if (zone && zone !== 'Z') {
    const offsetHours = Number(zone.slice(1, 3));
    const offsetMinutes = Number(zone.slice(4, 6));
    if (offsetHours > 23 || offsetMinutes > 59) return undefined;
    ms -= (zone[0] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  }
  const utcYear = new Date(ms).getUTCFullYear();
  return utcYear < 1 || utcYear > 9999 ? undefined : ms;
}

function realDateTime(year: number, month: number, day: number, hour: number, minute: number, second: number): boolean {
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month) && hour <= 23 && minute <= 59 && second <= 59;
}

/**
 * An OCPI DateTime as the hub accepts it (README, What the hub accepts beyond the strict letter): no
 * zone, Z or +00:00, so the fields are the UTC instant and no Date is needed (this runs on every
 * push's last_updated).
 */
export function isOcpiDateTime(value: string): boolean {
  if (!OCPI_DATE_TIME.test(value)) return false;
  // The pattern holds month, hour, minute, second and year 0001+ in range: only a day past the 28th
  // needs its month (this runs on every push's last_updated, so no match array and no Date).
  const digit = (at: number): number => value.charCodeAt(at) - 48;
  const day = digit(8) * 10 + digit(9);
  return day <= 28 || day <= daysIn(digit(0) * 1000 + digit(1) * 100 + digit(2) * 10 + digit(3), digit(5) * 10 + digit(6));
}
