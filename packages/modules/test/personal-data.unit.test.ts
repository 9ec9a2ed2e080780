import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { topics } from '@hub/events';
import { moduleOfDelivery, ocpiModules, type OcpiModule } from '../src/modules.ts';
import { personalDataOnTopic, personalFieldsOf } from '../src/personal-data.ts';

// Drivers' personal data as the modules declare it (docs/decisions/0013-erasure-by-destroying-data-keys.md):
// the topics that carry it, and the names erasure and the delivery rows give its objects.

describe("the modules' personal data", () => {
  it('is carried by the tokens, sessions, CDRs and commands topics and the tokens snapshot, no other', () => {
    const carrying = Object.values(topics).filter((t) => personalDataOnTopic(t) !== undefined);
    assert.deepEqual(carrying.sort(), [topics.cdrs, topics.commands, topics.sessions, topics.tokens, topics.tokensSnapshot].sort());
    assert.equal(personalDataOnTopic(topics.tokensSnapshot), personalDataOnTopic(topics.tokens));
  });

  it("names the objects erasure finds in delivery rows by the rows' kind (packages/store passes it on)", () => {
    for (const kind of ['token', 'session', 'cdr'] as const) assert.equal(moduleOfDelivery(kind).personalData?.object, kind);
  });

  it('is named by the subject only where the Kafka key is the object (CC/PID/ID)', () => {
    for (const m of Object.values(ocpiModules) as OcpiModule[]) {
      if (m.personalData?.driverToken === 'subject') assert.equal(m.key, 'object', m.id);
    }
  });

  it('declares each personal field once per object', () => {
    for (const object of ['token', 'session', 'cdr', 'command'] as const) {
      const paths = personalFieldsOf(object).map((p) => p.join('.'));
      assert.equal(new Set(paths).size, paths.length, object);
    }
  });
});
