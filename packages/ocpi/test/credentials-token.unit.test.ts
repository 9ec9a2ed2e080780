// Credentials tokens: how the hub mints, stores (hash) and recognises them in an Authorization header
// (OCPI 2.2.1 transport_and_format.asciidoc, Authorization header; credentials.asciidoc).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  authorizationHeader,
  credentialsTokenCandidates,
  generateCredentialsToken,
  hashCredentialsToken,
  hashesEqual,
} from '../src/credentials-token.ts';

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

describe('generateCredentialsToken', () => {
  it('mints tokens of at least 256 random bits as base64url (43+ characters)', () => {
    const token = generateCredentialsToken();
    assert.match(token, /^[A-Za-z0-9_-]{43,}$/);
    assert.ok(Buffer.from(token, 'base64url').length >= 32);
  });

  it('mints a different token every time', () => {
    const tokens = new Set(Array.from({ length: 100 }, () => generateCredentialsToken()));
    assert.equal(tokens.size, 100);
  });

  it('mints tokens within the OCPI limit of 64 printable ASCII characters', () => {
    const token = generateCredentialsToken();
    assert.ok(token.length <= 64);
    assert.match(token, /^[\x21-\x7e]+$/);
  });
});

describe('hashCredentialsToken', () => {
  it('stores a token as its SHA-256 in lower-case hex', () => {
    const hash = hashCredentialsToken('abc');
    assert.equal(hash, 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    assert.equal(hash, createHash('sha256').update('abc').digest('hex'));
  });

  it('gives different hashes for different tokens and the same hash for the same token', () => {
    assert.notEqual(hashCredentialsToken('token-a'), hashCredentialsToken('token-b'));
    assert.equal(hashCredentialsToken('token-a'), hashCredentialsToken('token-a'));
  });
});

describe('hashesEqual', () => {
  const h = hashCredentialsToken('one');

  it('is true for the same hash', () => {
    assert.equal(hashesEqual(h, hashCredentialsToken('one')), true);
  });

  it('is false for a different hash of the same length', () => {
    assert.equal(hashesEqual(h, hashCredentialsToken('two')), false);
  });

  it('is false (and does not throw) for hashes of different lengths', () => {
    assert.equal(hashesEqual(h, h.slice(0, 32)), false);
    assert.equal(hashesEqual(h, ''), false);
    assert.equal(hashesEqual('', h), false);
  });
});

describe('credentialsTokenCandidates', () => {
  const token = 'ebf3b399-779f-4497-9b9d-ac6ad3cc44d2';

  it('decodes a Base64 header value to the token and tries it before the raw value', () => {
    assert.deepEqual(credentialsTokenCandidates(`Token ${b64(token)}`), [token, b64(token)]);
  });

  it('accepts a token sent raw, as many 2.1.1/2.2 peers do', () => {
    assert.deepEqual(credentialsTokenCandidates(`Token ${token}`), [token]);
  });

  it('accepts the "token" keyword in any case', () => {
    assert.deepEqual(credentialsTokenCandidates(`token ${b64(token)}`), [token, b64(token)]);
    assert.deepEqual(credentialsTokenCandidates(`TOKEN ${token}`), [token]);
  });

  it('gives no candidate for a missing header', () => {
    assert.deepEqual(credentialsTokenCandidates(undefined), []);
    assert.deepEqual(credentialsTokenCandidates(''), []);
  });

  it('gives no candidate for another scheme or a header without the Token keyword', () => {
    assert.deepEqual(credentialsTokenCandidates(`Bearer ${token}`), []);
    assert.deepEqual(credentialsTokenCandidates(token), []);
  });

  it('gives no candidate for "Token" without a value', () => {
    assert.deepEqual(credentialsTokenCandidates('Token'), []);
    assert.deepEqual(credentialsTokenCandidates('Token '), []);
  });

  it('gives no candidate for a value over 256 characters', () => {
    assert.deepEqual(credentialsTokenCandidates(`Token ${'a'.repeat(257)}`), []);
    assert.equal(credentialsTokenCandidates(`Token ${'a'.repeat(256)}`).length, 1);
  });

  it('offers only the raw value when the Base64 decodes to non-printable bytes', () => {
    const binary = Buffer.from([0x00, 0x01, 0xff, 0x10, 0x7f, 0x80]).toString('base64');
    assert.deepEqual(credentialsTokenCandidates(`Token ${binary}`), [binary]);
  });
});

describe('authorizationHeader', () => {
  it('sends the token Base64 encoded after "Token ", as OCPI 2.2.1 requires', () => {
    const token = generateCredentialsToken();
    const header = authorizationHeader(token);
    assert.equal(header, `Token ${b64(token)}`);
    assert.equal(credentialsTokenCandidates(header)[0], token);
  });
});
