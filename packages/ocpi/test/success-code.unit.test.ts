// Which partner status codes mean success (status_codes.asciidoc, 1xxx: 1000, and 1900-1999 for
// custom success codes): a delivery answered so is done; anything else is retried.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isSuccessCode } from '../src/envelope.ts';

describe('isSuccessCode', () => {
  it('accepts 1000 and the custom success range', () => {
    for (const code of [1000, 1900, 1999]) assert.equal(isSuccessCode(code), true, String(code));
  });

  it('refuses errors, other numbers and non-numbers', () => {
    for (const code of [999, 2000, 2001, 3000, 4001, 1000.5, '1000', null, undefined]) assert.equal(isSuccessCode(code), false, String(code));
  });
});
