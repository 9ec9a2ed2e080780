// Partner tokens at rest: AES-256-GCM, so they can be sent back to partners but are unreadable and
// tamper-evident in the database. And the ConnectionStatus the hub reports for a party.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { connectionStatus } from '@hub/core';
import { aesGcmTokenCipher } from '../src/token-cipher.ts';

const key = randomBytes(32);
const token = 'partner-token-0f8c2b1e-6d4a-4c55-9a2e-7b1d3c9e0a11';

describe('aesGcmTokenCipher', () => {
  it('opens what it sealed', () => {
    const cipher = aesGcmTokenCipher(key);
    assert.equal(cipher.open(cipher.seal(token)), token);
    assert.equal(cipher.open(cipher.seal('')), '');
    assert.equal(cipher.open(cipher.seal('tökén ✓')), 'tökén ✓');
  });

  it('opens with a second cipher built from the same key (e.g. after a restart)', () => {
    assert.equal(aesGcmTokenCipher(Buffer.from(key)).open(aesGcmTokenCipher(key).seal(token)), token);
  });

  it('seals the same token differently every time (random IV)', () => {
    const cipher = aesGcmTokenCipher(key);
    const a = cipher.seal(token);
    const b = cipher.seal(token);
    assert.notDeepEqual(a, b);
    assert.notDeepEqual(a.subarray(1, 13), b.subarray(1, 13));
  });

  it('does not store the plaintext in the sealed bytes', () => {
    const sealed = aesGcmTokenCipher(key).seal(token);
    assert.equal(sealed.includes(Buffer.from(token, 'utf8')), false);
    assert.equal(sealed.toString('latin1').includes(token), false);
    assert.equal(sealed.length, 1 + 12 + 16 + Buffer.byteLength(token));
  });

  it('refuses to open sealed bytes with any single byte changed', () => {
    const cipher = aesGcmTokenCipher(key);
    const sealed = cipher.seal(token);
    for (let i = 0; i < sealed.length; i++) {
      const tampered = Buffer.from(sealed);
      tampered[i] = (tampered[i] ?? 0) ^ 0x01;
      assert.throws(() => cipher.open(tampered), Error, `byte ${i}`);
    }
  });

  it('refuses truncated sealed bytes', () => {
    const cipher = aesGcmTokenCipher(key);
    const sealed = cipher.seal(token);
    assert.throws(() => cipher.open(sealed.subarray(0, sealed.length - 1)));
    assert.throws(() => cipher.open(sealed.subarray(0, 20)));
    assert.throws(() => cipher.open(Buffer.alloc(0)));
  });

  it('refuses to open with another key', () => {
    const sealed = aesGcmTokenCipher(key).seal(token);
    assert.throws(() => aesGcmTokenCipher(randomBytes(32)).open(sealed));
  });

  it('refuses a key that is not 32 bytes', () => {
    for (const length of [0, 16, 31, 33, 64]) {
      assert.throws(() => aesGcmTokenCipher(randomBytes(length)), /32 bytes/, String(length));
    }
  });
});

describe('connectionStatus', () => {
  const healths = ['CONNECTED', 'OFFLINE', 'UNKNOWN'] as const;

  it('is SUSPENDED whenever the operator suspended the party, registered or not, whatever its health', () => {
    for (const registered of [true, false]) {
      for (const health of healths) assert.equal(connectionStatus({ suspended: true, registered, health }), 'SUSPENDED');
    }
  });

  it('is PLANNED before the credentials exchange, whatever its health', () => {
    for (const health of healths) assert.equal(connectionStatus({ suspended: false, registered: false, health }), 'PLANNED');
  });

  it('is CONNECTED for a registered party whose last probe succeeded', () => {
    assert.equal(connectionStatus({ suspended: false, registered: true, health: 'CONNECTED' }), 'CONNECTED');
  });

  it('is OFFLINE for a registered party whose last probe failed or that was never probed', () => {
    assert.equal(connectionStatus({ suspended: false, registered: true, health: 'OFFLINE' }), 'OFFLINE');
    assert.equal(connectionStatus({ suspended: false, registered: true, health: 'UNKNOWN' }), 'OFFLINE');
  });
});
