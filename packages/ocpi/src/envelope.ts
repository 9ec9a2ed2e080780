// OCPI 2.2.1 transport_and_format.asciidoc, Response format: every response carries status_code,
// an optional status_message and timestamp; data holds the payload.

export const OCPI_SUCCESS = 1000;

export interface OcpiEnvelope<T = unknown> {
  data?: T;
  status_code: number;
  status_message?: string;
  timestamp: string;
}

let lastMs = 0;
let lastText = '';

/** UTC with milliseconds, the shape the interface document asks for (YYYY-MM-DDThh:mm:ss.sssZ). */
export function ocpiTimestamp(at?: Date): string {
  if (at) return at.toISOString();
  // Every answer carries one; under load many answers share a millisecond, so format it once.
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastText = new Date(now).toISOString();
  }
  return lastText;
}

/** Whether a partner's status_code means success: 1000, or 1900-1999 for custom success codes (status_codes.asciidoc, 1xxx). */
export function isSuccessCode(statusCode: unknown): boolean {
  return typeof statusCode === 'number' && Number.isInteger(statusCode) && statusCode >= 1000 && statusCode <= 1999;
}

export function success<T>(data: T, statusMessage?: string): OcpiEnvelope<T> {
  const envelope: OcpiEnvelope<T> = { data, status_code: OCPI_SUCCESS, timestamp: ocpiTimestamp() };
  if (statusMessage) envelope.status_message = statusMessage;
  return envelope;
}

/** Envelope without data, as OCPI advises for answers to pushes (transport_and_format, Response format). */
export function acknowledged(): OcpiEnvelope<never> {
  return { status_code: OCPI_SUCCESS, timestamp: ocpiTimestamp() };
}

export function failure(statusCode: number, statusMessage: string, data?: unknown): OcpiEnvelope {
  const envelope: OcpiEnvelope = { status_code: statusCode, status_message: statusMessage, timestamp: ocpiTimestamp() };
  if (data !== undefined) envelope.data = data;
  return envelope;
}
