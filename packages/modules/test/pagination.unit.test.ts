// Pagination (OCPI 2.2.1 transport_and_format.asciidoc, Pagination): offset/limit/date_from/date_to
// parsing and the X-Total-Count, X-Limit and Link headers.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Request, Response } from 'express';
import { HubError } from '@hub/ocpi';
import { parsePage, setPageHeaders, type PageRequest } from '../src/http/pagination.ts';

const limits = { defaultLimit: 50, maxLimit: 100 };
const request = (query: Record<string, unknown>): Request => ({ query }) as unknown as Request;
const page = (query: Record<string, unknown>): PageRequest => parsePage(request(query), limits);

function invalid(query: Record<string, unknown>, detail: RegExp): void {
  assert.throws(
    () => page(query),
    (e: unknown) => {
      assert.ok(e instanceof HubError);
      assert.equal(e.kind, 'INVALID_PARAMETERS');
      assert.equal(e.spec.ocpi, 2001);
      assert.match(e.message, detail);
      return true;
    },
  );
}

describe('parsePage', () => {
  it('defaults to offset 0 and the default limit, without dates', () => {
    assert.deepEqual(page({}), { offset: 0, limit: 50 });
  });

  it('reads offset and limit', () => {
    assert.deepEqual(page({ offset: '20', limit: '10' }), { offset: 20, limit: 10 });
  });

  it('caps the limit at the server maximum', () => {
    assert.equal(page({ limit: '1000' }).limit, 100);
    assert.equal(page({ limit: '100' }).limit, 100);
  });

  it('uses the default limit for limit=0', () => {
    assert.equal(page({ limit: '0' }).limit, 50);
  });

  it('never goes above the maximum (X-Limit), even when the configured default is larger', () => {
    const small = { defaultLimit: 100, maxLimit: 50 };
    assert.equal(parsePage(request({ limit: '0' }), small).limit, 50);
    assert.equal(parsePage(request({}), small).limit, 50);
  });

  it('refuses a negative, fractional or non-numeric offset or limit with INVALID_PARAMETERS', () => {
    invalid({ offset: '-1' }, /offset must be a non-negative integer/);
    invalid({ offset: 'abc' }, /offset must be a non-negative integer/);
    invalid({ offset: '1.5' }, /offset must be a non-negative integer/);
    invalid({ offset: '' }, /offset must be a non-negative integer/);
    invalid({ limit: '-5' }, /limit must be a non-negative integer/);
    invalid({ limit: 'ten' }, /limit must be a non-negative integer/);
  });

  it('refuses a parameter given more than once', () => {
    invalid({ offset: ['0', '10'] }, /offset must be given once/);
    invalid({ date_from: ['2025-01-01T00:00:00Z', '2025-02-01T00:00:00Z'] }, /date_from must be given once/);
  });

  it('parses date_from and date_to with a Z, an offset or fractional seconds', () => {
    const p = page({ date_from: '2025-01-02T03:04:05Z', date_to: '2025-01-02T05:04:05.250+02:00' });
    assert.equal(p.dateFrom?.toISOString(), '2025-01-02T03:04:05.000Z');
    assert.equal(p.dateTo?.toISOString(), '2025-01-02T03:04:05.250Z');
  });

  it('refuses an impossible date instead of rolling it over (read as the schema layer reads a DateTime)', () => {
    for (const odd of ['2025-02-30T00:00:00Z', '2025-01-01T24:00:00Z', '0000-01-01T00:00:00Z', '2025-13-01T00:00:00']) invalid({ date_from: odd }, /date_from must be an ISO 8601 date-time/);
    assert.equal(page({ date_to: '2024-02-29T00:00:00+00:00' }).dateTo?.toISOString(), '2024-02-29T00:00:00.000Z');
  });

  it('reads a date without a zone designator as UTC', () => {
    const p = page({ date_from: '2025-01-02T03:04:05', date_to: '2025-01-02T03:04:05.5' });
    assert.equal(p.dateFrom?.toISOString(), '2025-01-02T03:04:05.000Z');
    assert.equal(p.dateTo?.toISOString(), '2025-01-02T03:04:05.500Z');
  });

  it('refuses a date that is not an ISO 8601 date-time', () => {
    invalid({ date_from: 'yesterday' }, /date_from must be an ISO 8601 date-time/);
    invalid({ date_from: '2025-01-02' }, /date_from must be an ISO 8601 date-time/);
    invalid({ date_to: '2025-13-45T99:00:00Z' }, /date_to must be an ISO 8601 date-time/);
    invalid({ date_to: '1735787045' }, /date_to must be an ISO 8601 date-time/);
  });
});

describe('setPageHeaders', () => {
  const options = { publicUrl: 'https://hub.example.com/ocpi/2.2.1/hubclientinfo?offset=0&limit=2' };

  function headersFor(p: PageRequest, total: number, returned: number): Record<string, string> {
    const headers: Record<string, string> = {};
    const res = {
      setHeader(name: string, value: string) {
        headers[name] = value;
      },
    } as unknown as Response;
    setPageHeaders(res, p, total, returned, options);
    return headers;
  }

  it('reports the total and the limit applied to the request (transport_and_format.asciidoc, Pagination: X-Limit)', () => {
    const headers = headersFor({ offset: 0, limit: 2 }, 5, 2);
    assert.equal(headers['X-Total-Count'], '5');
    assert.equal(headers['X-Limit'], '2');
  });

  it('X-Limit is the smaller of the requested limit and the server maximum', () => {
    const capped = parsePage(request({ limit: '2000' }), { defaultLimit: 50, maxLimit: 100 });
    assert.equal(headersFor(capped, 500, 100)['X-Limit'], '100');
    const defaulted = parsePage(request({}), { defaultLimit: 50, maxLimit: 100 });
    assert.equal(headersFor(defaulted, 500, 50)['X-Limit'], '50');
  });

  it('links to the next page with the same limit and filters when more objects exist', () => {
    const p: PageRequest = { offset: 2, limit: 2, dateFrom: new Date('2025-01-01T00:00:00Z'), dateTo: new Date('2025-02-01T00:00:00Z') };
    const link = headersFor(p, 5, 2)['Link'];
    assert.ok(link, 'no Link header');
    const match = /^<([^>]+)>; rel="next"$/.exec(link);
    assert.ok(match?.[1], link);
    const next = new URL(match[1]);
    assert.equal(next.origin + next.pathname, 'https://hub.example.com/ocpi/2.2.1/hubclientinfo');
    assert.equal(next.searchParams.get('offset'), '4');
    assert.equal(next.searchParams.get('limit'), '2');
    assert.equal(next.searchParams.get('date_from'), '2025-01-01T00:00:00.000Z');
    assert.equal(next.searchParams.get('date_to'), '2025-02-01T00:00:00.000Z');
    assert.equal(next.searchParams.getAll('offset').length, 1);
  });

  it('leaves the dates out of the link when the request had none', () => {
    const link = headersFor({ offset: 0, limit: 2 }, 5, 2)['Link'] ?? '';
    assert.doesNotMatch(link, /date_from|date_to/);
    assert.match(link, /offset=2&limit=2/);
  });

  it('sends no Link on the last page', () => {
    const headers = headersFor({ offset: 4, limit: 2 }, 5, 1);
    assert.equal(headers['Link'], undefined);
    assert.equal(headers['X-Total-Count'], '5');
  });

  it('sends no Link on an empty page', () => {
    assert.equal(headersFor({ offset: 0, limit: 2 }, 0, 0)['Link'], undefined);
    assert.equal(headersFor({ offset: 10, limit: 2 }, 5, 0)['Link'], undefined);
  });
});
