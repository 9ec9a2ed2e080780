import type { Request, RequestHandler, Response } from 'express';
import { HubError, ocpiTimestamp, success, acknowledged, type OcpiEnvelope } from '@hub/ocpi';

// How a route reads the routing headers and writes its answer: the one envelope writer every module's
// handlers and the ingress's error middleware share (transport_and_format.asciidoc, Response format).

/**
 * The party a request names as its sender in the OCPI-from headers (transport_and_format.asciidoc,
 * OCPI-from-country-code / OCPI-from-party-id), upper-cased; undefined when it names none.
 */
export function namedSender(req: Request): { countryCode: string; partyId: string } | undefined {
  const countryCode = req.headers['ocpi-from-country-code'];
  const partyId = req.headers['ocpi-from-party-id'];
  return typeof countryCode === 'string' && typeof partyId === 'string' && countryCode !== '' && partyId !== ''
    ? { countryCode: countryCode.toUpperCase(), partyId: partyId.toUpperCase() }
    : undefined;
}

/**
 * The party a push names as its receiver in the OCPI-to headers (transport_and_format.asciidoc,
 * Message Routing), upper-cased; undefined when it names none. One header without the other names no
 * party and is refused (2001) rather than read as an open routing request, which would broadcast.
 */
export function namedReceiver(req: Request): { countryCode: string; partyId: string } | undefined {
  const value = (name: string) => {
    const v = req.headers[name];
    return typeof v === 'string' && v.trim() !== '' ? v.trim().toUpperCase() : undefined;
  };
  const countryCode = value('ocpi-to-country-code');
  const partyId = value('ocpi-to-party-id');
  if (!countryCode && !partyId) return undefined;
  if (!countryCode || !partyId) throw new HubError('INVALID_PARAMETERS', { detail: 'OCPI-to-country-code and OCPI-to-party-id go together' });
  return { countryCode, partyId };
}

/** Wraps an async handler so a rejection reaches the error middleware. */
export function handle(fn: (req: Request, res: Response) => Promise<void> | void): RequestHandler {
  return (req, res, next) => {
    try {
      const result = fn(req, res);
      if (result instanceof Promise) result.catch(next);
    } catch (e) {
      next(e);
    }
  };
}

/** Writes the envelope directly: res.json's content negotiation costs more than the answer itself. */
export function send(res: Response, httpStatus: number, envelope: OcpiEnvelope): void {
  res.locals['ocpiStatus'] = envelope.status_code;
  res.statusCode = httpStatus;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.end(JSON.stringify(envelope));
}

/**
 * A success envelope around data serialised once (answers that never change, such as version
 * details): only the timestamp is new per request.
 */
export function okPreserialized(res: Response, dataJson: string): void {
  res.locals['ocpiStatus'] = 1000;
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.end(`{"data":${dataJson},"status_code":1000,"timestamp":"${ocpiTimestamp()}"}`);
}

/** A success envelope around a list of documents that are already JSON text (read-model rows). */
export function okPreserializedList(res: Response, documentsJson: readonly string[]): void {
  okPreserialized(res, `[${documentsJson.join(',')}]`);
}

export function ok(res: Response, data: unknown, httpStatus = 200): void {
  send(res, httpStatus, success(data));
}

export function okEmpty(res: Response, httpStatus = 200): void {
  send(res, httpStatus, acknowledged());
}
