// One reading of ISO 8601 times (types.asciidoc, DateTime): the schema layer's OCPI DateTime format,
// the store's utcTime and the date_from/date_to parameters all use isoInstant.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isOcpiDateTime, isoInstant } from '../src/date-time.ts';

describe('isOcpiDateTime', () => {
  it('accepts the forms platforms send: with or without Z, an explicit +00:00, with or without a fraction', () => {
    for (const t of ['2026-11-22T10:00:00Z', '2026-11-22T10:00:00', '2026-11-22T10:00:00+00:00', '2026-11-22T10:00:00.123Z', '2026-11-22T10:00:00.123456789', '2024-02-29T23:59:59.9+00:00', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59Z']) {
      assert.equal(isOcpiDateTime(t), true, t);
    }
  });

  it('refuses other offsets (OCPI DateTimes are UTC), other shapes and impossible or unstorable instants', () => {
    for (const t of ['2026-11-22T10:00:00+01:00', '2026-11-22T10:00:00-00:00', '2026-11-22 10:00:00Z', '2026-11-22T10:00Z', '2026-11-22', '2026-11-22T10:00:00.Z', '2026-11-22T10:00:00.1234567890Z', '']) {
      assert.equal(isOcpiDateTime(t), false, t);
    }
    for (const t of ['2026-13-01T00:00:00Z', '2026-00-10T00:00:00Z', '2026-02-29T00:00:00Z', '2026-02-30T00:00:00', '2026-04-31T00:00:00Z', '2026-01-00T00:00:00Z', '2026-01-01T24:00:00Z', '2026-01-01T23:60:00Z', '2016-12-31T23:59:60Z', '0000-01-01T00:00:00Z']) {
      assert.equal(isOcpiDateTime(t), false, t);
    }
  });
});

describe('isoInstant', () => {
  it('reads a zone-less time as UTC, or refuses it when asked to', () => {
    assert.equal(isoInstant('2026-11-22T10:00:00'), Date.UTC(2026, 10, 22, 10));
    assert.equal(isoInstant('2026-11-22T10:00:00', 'refuse'), undefined);
    assert.equal(isoInstant('2026-11-22T10:00:00.250+00:00'), Date.UTC(2026, 10, 22, 10, 0, 0, 250));
  });

  it('applies any offset, but refuses an instant that leaves years 1 to 9999', () => {
    assert.equal(isoInstant('2026-11-22T10:00:00-01:30'), Date.UTC(2026, 10, 22, 11, 30));
    assert.equal(isoInstant('9999-12-31T23:00:00-05:00'), undefined);
    assert.equal(isoInstant('0001-01-01T00:00:00+01:00'), undefined);
  });
});

describe('isoInstant milliseconds', () => {
  it('reads the fraction to the millisecond as Date.parse does (truncated)', () => {
    for (const t of ['2026-11-22T10:00:00.29Z', '2026-11-22T10:00:00.1239Z', '2026-11-22T10:00:00.007+02:00', '0050-03-01T00:00:00.5Z']) assert.equal(isoInstant(t), Date.parse(t), t);
  });
});
