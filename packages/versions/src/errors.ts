import type { OcpiVersion } from './version.ts';

/**
 * A canonical object that cannot be written in a partner's version without inventing data (e.g. a
 * 2.2.1 connector standard 2.1.1 has no value for, a session whose Location is unknown). The caller
 * does not deliver it to that partner (and may log or count it); it is no refusal of any request.
 */
export class NotRepresentableError extends Error {
  readonly version: OcpiVersion | '2.3.0';
  readonly object: string;
  /** What it needs may come later (an EVSE its Location does not hold yet, the projection behind): worth another attempt. */
  readonly retryable: boolean;

  constructor(version: OcpiVersion | '2.3.0', object: string, reason: string, options: { retryable?: boolean } = {}) {
    super(`${object} cannot be written in OCPI ${version}: ${reason}`);
    this.name = 'NotRepresentableError';
    this.version = version;
    this.object = object;
    this.retryable = options.retryable ?? false;
  }
}

export function isNotRepresentable(e: unknown): e is NotRepresentableError {
  return e instanceof NotRepresentableError;
}
