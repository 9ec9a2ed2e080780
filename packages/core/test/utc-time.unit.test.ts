// Times from events that reach SQL: the creation time an event gives its object (only an ISO 8601
// time with a zone, else '': the object takes its last_updated), and a session's version time (an
// OCPI DateTime, zone-less meaning UTC).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { creationTime } from '../src/read-model-records.ts';
import { utcTime } from '../src/utc-time.ts';

describe('creationTime', () => {
  it('normalises a zoned ISO 8601 time to UTC with milliseconds', () => {
    assert.equal(creationTime('2026-11-21T10:00:00Z'), '2026-11-21T10:00:00.000Z');
    assert.equal(creationTime('2026-11-21T10:00:00.123456+05:30'), '2026-11-21T04:30:00.123Z');
  });

  it('refuses a time without a zone (it would depend on the projector host), and anything else', () => {
    for (const odd of ['2026-11-21T10:00:00', '20000', '', 'yesterday', '0000-01-01T00:00:00Z', '9999-12-31T23:00:00-05:00', '2026-13-45T10:00:00Z']) {
      assert.equal(creationTime(odd), '', odd);
    }
  });
});

describe('utcTime', () => {
  it('reads a time without a zone as UTC when asked to (OCPI DateTime, types.asciidoc)', () => {
    assert.equal(utcTime('2026-11-21T10:00:00', 'utc'), '2026-11-21T10:00:00.000Z');
    assert.equal(utcTime('2026-11-21T10:00:00', 'refuse'), null);
    assert.equal(utcTime('2026-11-21T10:00:00-01:00', 'utc'), '2026-11-21T11:00:00.000Z');
  });

  it('gives null for an impossible date or time instead of rolling it over (as the schema layer, isoInstant)', () => {
    for (const odd of ['2026-02-30T10:00:00Z', '2026-01-01T24:00:00', '2026-04-31T00:00:00+00:00', '2016-12-31T23:59:60Z']) assert.equal(utcTime(odd, 'utc'), null, odd);
    assert.equal(utcTime('2024-02-29T10:00:00.5+00:00', 'utc'), '2024-02-29T10:00:00.500Z');
  });

  it('gives null for what Postgres could not read', () => {
    for (const odd of [undefined, 42, '', '0000-01-01T00:00:00Z', '9999-12-31T23:00:00-05:00', '2026-02-30T25:00:00Z']) assert.equal(utcTime(odd, 'utc'), null, String(odd));
  });
});
