// The member at a declared path of an event's object (delivery rules' Location id, personal-data rules'
// driver token): another platform's event may carry anything on the way, and a step that is not an
// object ends the walk with undefined, never a throw or a character of a string.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { memberAt } from '../src/object-events.ts';

describe('memberAt', () => {
  it('walks the path through objects', () => {
    assert.deepEqual(memberAt({ request: { token: { uid: 'U1' } } }, ['request', 'token']), { uid: 'U1' });
    assert.equal(memberAt({ cdr_location: { id: 'LOC1' } }, ['cdr_location', 'id']), 'LOC1');
  });

  it('is undefined where a step is missing, null, a string, a number or an array', () => {
    for (const data of [undefined, null, '', 'LOC1', 0, [], [{ id: 'LOC1' }], {}, { cdr_location: null }, { cdr_location: 'id' }, { cdr_location: ['LOC1'] }]) {
      assert.equal(memberAt(data, ['cdr_location', 'id']), undefined, JSON.stringify(data));
    }
  });
});
