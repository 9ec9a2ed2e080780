// What a re-append relies on (docs/decisions/0003-each-cdr-once.md): the search of a CDR's partition
// finds a record that is there, also while the partition is being written to. A search that took the
// consumer's first fetch (from the end, before the seek took effect) for the searched range said
// "absent", and the CDR was appended a second time.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { cdrEventTypes, newEvent, topics } from '@hub/events';
import { createTestStack, type TestStack } from '../src/stack.ts';

const topic = topics.cdrs;

function cdrEvent(id: string) {
  return newEvent({ type: cdrEventTypes.cdrPosted, source: 'test', subject: `NL/CPO/${id}`, key: 'NL/CPO/SAME-PARTITION', data: { id } });
}

describe('the search of a topic for events', () => {
  let stack: TestStack;
  before(async () => {
    stack = await createTestStack('event_lookup');
  });
  after(async () => {
    await stack.cleanup();
  });

  it('finds a record in its partition while that partition is written to, every time', async () => {
    const since = new Date();
    const wanted = cdrEvent('WANTED');
    await stack.eventLog.append(topic, [wanted]);
    // Records keep arriving in the searched partition (same key) while the searches run.
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing) {
        await stack.eventLog.append(topic, [cdrEvent(`FILLER-${written++}`)]);
      }
    })();
    const results: boolean[] = [];
    try {
      for (let n = 0; n < 8; n++) {
        const found = await stack.eventLog.findEvents(topic, [{ key: wanted.key, id: wanted.id, since }]);
        results.push(found.has(wanted.id));
      }
    } finally {
      writing = false;
      await writer;
    }
    assert.ok(written > 0, 'the partition was written to during the searches');
    assert.deepEqual(results, results.map(() => true), `found in ${results.filter(Boolean).length} of ${results.length} searches`);
  });

  it('finds nothing for an event that is not there, and stops at the end of the partition', async () => {
    const since = new Date(Date.now() - 1_000);
    const absent = cdrEvent('ABSENT');
    await stack.eventLog.append(topic, [cdrEvent('PRESENT')]);
    const found = await stack.eventLog.findEvents(topic, [{ key: absent.key, id: absent.id, since }]);
    assert.equal(found.size, 0);
  });

  it("reads a broker setting the CDR settle window is checked against (Kafka's default replica lag)", async () => {
    assert.equal(await stack.eventLog.brokerSetting('replica.lag.time.max.ms'), '30000');
    assert.equal(await stack.eventLog.brokerSetting('no.such.setting'), undefined);
  });
});
