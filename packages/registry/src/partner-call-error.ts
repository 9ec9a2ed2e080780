/** Why a call to a partner platform failed; the partners adapter throws it, use cases map it. */
export type PartnerCallFailure =
  | 'URL_NOT_ALLOWED'
  | 'NETWORK'
  | 'TIMEOUT'
  | 'HTTP_STATUS'
  | 'NOT_JSON'
  | 'OCPI_STATUS'
  | 'UNEXPECTED_BODY';

export class PartnerCallError extends Error {
  readonly reason: PartnerCallFailure;
  readonly url: string;
  constructor(reason: PartnerCallFailure, url: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PartnerCallError';
    this.reason = reason;
    this.url = url;
  }
}
