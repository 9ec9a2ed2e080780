import { hash, randomBytes } from 'node:crypto';
import { OCPI_VERSION, type OcpiVersion } from './types.ts';

// Credentials tokens (OCPI 2.2.1 credentials.asciidoc): printable ASCII, at most 64 characters.
// The hub's own tokens are 256 random bits in base64url (43 characters), stored only as SHA-256
// hashes: a fast hash is enough for values with that much entropy.

export const TOKEN_BYTES = 32;

export function generateCredentialsToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

export function hashCredentialsToken(token: string): string {
  // One-shot crypto.hash: no Hash object per call on the authentication path.
  return hash('sha256', token, 'hex');
}

/**
 * Constant-time equality of two secrets of equal length (hex hashes, Authorization headers): every
 * character is compared whatever differs first, so the time does not depend on how much matches.
 * Only the length may end it early. No allocation (authentication path).
 */
export function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** Constant-time equality of two hex hashes. */
export const hashesEqual = constantTimeEqual;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2,3})?$/;
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;

/**
 * The candidate tokens an Authorization header may carry. OCPI 2.2.1 (transport_and_format.asciidoc,
 * Authorization header) requires "Token <base64(token)>", and notes that many 2.1.1/2.2 peers send the
 * token raw; the hub accepts both, trying the decoded form first. Returns [] when the header is not of
 * the form "Token <value>".
 */
export function credentialsTokenCandidates(authorization: string | undefined): string[] {
  if (!authorization) return [];
  const match = /^Token\s+(\S+)\s*$/i.exec(authorization);
  const value = match?.[1];
  if (!value || value.length > 256) return [];
  const candidates: string[] = [];
  if (BASE64.test(value)) {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    if (PRINTABLE_ASCII.test(decoded) && decoded !== value) candidates.push(decoded);
  }
  candidates.push(value);
  return candidates;
}

/**
 * The header value the hub sends: Base64 as OCPI 2.2.1 requires (transport_and_format.asciidoc,
 * Authorization header); the token as it is to a 2.1.1 partner (transport_and_format.md, 2.1.1,
 * Request format: "Its parameter is a string consisting of printable, non-whitespace ASCII characters").
 */
export function authorizationHeader(token: string, version: OcpiVersion = OCPI_VERSION): string {
  return version === '2.1.1' ? `Token ${token}` : `Token ${Buffer.from(token, 'utf8').toString('base64')}`;
}
