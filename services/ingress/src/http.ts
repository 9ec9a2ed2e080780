import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { HubError, failure, ocpiTimestamp, success, acknowledged, type OcpiEnvelope } from '@hub/ocpi';

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

/**
 * The one place that turns errors into answers (error registry: @hub/ocpi errors.ts). Body-parser
 * errors become MALFORMED_JSON / BODY_TOO_LARGE; anything that is not a HubError is a bug or an
 * outage, logged with its stack and answered without internals.
 */
export function errorMiddleware() {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    let hubError: HubError;
    if (err instanceof HubError) {
      hubError = err;
    } else {
      const e = err as { type?: string; status?: number; message?: string };
      if (e.type === 'entity.parse.failed' || e.type === 'encoding.unsupported' || e.type === 'charset.unsupported') {
        hubError = new HubError('MALFORMED_JSON', { detail: e.message ?? 'unparseable' });
      } else if (e.type === 'entity.too.large') {
        hubError = new HubError('BODY_TOO_LARGE');
      } else if (e.type === 'request.aborted' || e.type === 'request.size.invalid') {
        hubError = new HubError('MALFORMED_JSON', { detail: 'incomplete body' });
      } else {
        // Kafka or Postgres unreachable or too slow: the partner should retry, nothing was accepted.
        const name = (err as { name?: string }).name ?? '';
        const dependency = name === 'AppendTimeoutError' || name.startsWith('KafkaJS') || /ECONNREFUSED|Connection terminated|timeout/i.test(e.message ?? '');
        hubError = new HubError(dependency ? 'UNAVAILABLE' : 'INTERNAL', { cause: err });
        req.ctx?.log.error('request failed', { err, path: req.path, method: req.method });
      }
    }
    if (res.headersSent) return;
    for (const [k, v] of Object.entries(hubError.headers)) res.setHeader(k, v);
    send(res, hubError.spec.http, failure(hubError.spec.ocpi, hubError.message, hubError.data));
  };
}
