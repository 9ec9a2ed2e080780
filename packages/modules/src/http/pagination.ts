import type { Request, Response } from 'express';
import { HubError, isoInstant } from '@hub/ocpi';

// Pagination (OCPI 2.2.1 transport_and_format.asciidoc, Pagination; interface document, Pagination):
// offset (default 0), limit (capped by the server maximum), date_from inclusive, date_to exclusive;
// X-Total-Count; X-Limit, the limit applied to this request ("with limit=2000 and a server maximum of
// 100, X-Limit is 100": a client sees whether its limit was reduced); Link rel="next" with the same
// filters when more exist.

export interface PageRequest {
  readonly offset: number;
  readonly limit: number;
  readonly dateFrom?: Date;
  readonly dateTo?: Date;
}

function single(req: Request, name: string): string | undefined {
  const v = req.query[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new HubError('INVALID_PARAMETERS', { detail: `${name} must be given once` });
  return v;
}

function parseDate(name: string, v: string | undefined): Date | undefined {
  if (v === undefined) return undefined;
  // OCPI DateTime without a zone designator is UTC (types.asciidoc, DateTime); read as the schema
  // layer and the store read times (isoInstant): no roll-over of impossible dates.
  const ms = isoInstant(v, 'utc');
  if (ms === undefined) throw new HubError('INVALID_PARAMETERS', { detail: `${name} must be an ISO 8601 date-time` });
  return new Date(ms);
}

function parseCount(name: string, v: string | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  if (!/^\d{1,9}$/.test(v)) throw new HubError('INVALID_PARAMETERS', { detail: `${name} must be a non-negative integer` });
  return Number(v);
}

export function parsePage(req: Request, limits: { defaultLimit: number; maxLimit: number }): PageRequest {
  const offset = parseCount('offset', single(req, 'offset'), 0);
  // limit=0 (or none) means the default, itself never above the maximum.
  const defaultLimit = Math.min(limits.defaultLimit, limits.maxLimit);
  const limit = Math.min(parseCount('limit', single(req, 'limit'), defaultLimit), limits.maxLimit);
  const dateFrom = parseDate('date_from', single(req, 'date_from'));
  const dateTo = parseDate('date_to', single(req, 'date_to'));
  return { offset, limit: limit === 0 ? defaultLimit : limit, ...(dateFrom ? { dateFrom } : {}), ...(dateTo ? { dateTo } : {}) };
}

export function setPageHeaders(
  res: Response,
  page: PageRequest,
  total: number,
  returned: number,
  options: { publicUrl: string },
): void {
  res.setHeader('X-Total-Count', String(total));
  res.setHeader('X-Limit', String(page.limit));
  const nextOffset = page.offset + returned;
  if (returned > 0 && nextOffset < total) {
    const next = new URL(options.publicUrl);
    next.search = '';
    next.searchParams.set('offset', String(nextOffset));
    next.searchParams.set('limit', String(page.limit));
    if (page.dateFrom) next.searchParams.set('date_from', page.dateFrom.toISOString());
    if (page.dateTo) next.searchParams.set('date_to', page.dateTo.toISOString());
    res.setHeader('Link', `<${next.toString()}>; rel="next"`);
  }
}
