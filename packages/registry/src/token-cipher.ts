import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { TokenCipher } from '@hub/core';

// AES-256-GCM: partner tokens must be sent back to partners, so they are encrypted (not hashed) at
// rest, with the key from configuration (HUB_SECRET_KEY). Layout: version byte, 12-byte IV, 16-byte
// tag, ciphertext.
const VERSION = 1;

export function aesGcmTokenCipher(key: Buffer): TokenCipher {
  if (key.length !== 32) throw new Error('token cipher key must be 32 bytes');
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
    },
    open(sealed) {
      if (sealed[0] !== VERSION) throw new Error('unknown sealed token version');
      if (sealed.length < 29) throw new Error('sealed token too short');
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(1, 13), { authTagLength: 16 });
      decipher.setAuthTag(sealed.subarray(13, 29));
      return Buffer.concat([decipher.update(sealed.subarray(29)), decipher.final()]).toString('utf8');
    },
  };
}
