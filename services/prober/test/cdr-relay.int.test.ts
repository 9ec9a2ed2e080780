// The prober's safety net for CDRs received but never put on Kafka (the ingress's append failed and
// the CPO did not post again), on real Kafka and Postgres.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createHash } from 'node:crypto';
import { topics } from '@hub/events';
import { createLogger } from '@hub/observability';
import { cdrPostedEvent } from '@hub/modules';
import { postgresDeliveryStore, type DeliveryStore } from '@hub/store';
import { givenTestStack } from '@hub/testing';
import { appendUnappendedCdrs } from '../src/cdr-relay.ts';

const logger = createLogger({ service: 'test', level: 'error' });

function received(id: string) {
  const document = { country_code: 'NL', party_id: 'CPO', id, cdr_token: { country_code: 'DE', party_id: 'EMS', uid: 'T1', type: 'RFID', contract_id: 'C1' }, total_cost: { excl_vat: 1 } };
  return { countryCode: 'NL', partyId: 'CPO', id, contentHash: createHash('sha256').update(id).digest('hex'), document };
}

describe('prober: CDRs received but not on Kafka', () => {
  const given = givenTestStack('cdr_relay');

  const cdrEvents = async (count: number) => {
    const consumer = given.stack.eventLog.consumer(`reader-${Math.random().toString(36).slice(2)}`);
    const events: Array<{ key: string; ceId: string; to: string }> = [];
    await consumer.connect();
    await consumer.subscribe({ topic: given.stack.eventLog.physical(topics.cdrs), fromBeginning: true });
    await new Promise<void>((resolve) => {
      const deadline = setTimeout(resolve, 10_000);
      void consumer.run({
        eachMessage: async ({ message }) => {
          events.push({ key: message.key?.toString() ?? '', ceId: String(message.headers?.['ce_id']), to: String(message.headers?.['ocpi-to']) });
          if (events.length >= count) {
            clearTimeout(deadline);
            resolve();
          }
        },
      });
    });
    await consumer.disconnect();
    return events;
  };

  it('appends a stranded CDR once it is old enough, with the ce_id the ingress would have given it, and marks it appended', async () => {
    const { stack } = given;
    const deliveries: DeliveryStore = postgresDeliveryStore(stack.pool);
    const stranded = received('LOST-1');
    assert.equal(await deliveries.receiveCdr(stranded), 'new'); // stored; the append then "failed"
    assert.equal(await appendUnappendedCdrs({ deliveries, eventLog: stack.eventLog, logger }, 3600), 0, 'too recent: the CPO may still retry');
    assert.equal(await deliveries.unappendedCdrCount(), 1);

    assert.equal(await appendUnappendedCdrs({ deliveries, eventLog: stack.eventLog, logger }, 0), 1);
    assert.equal(await deliveries.unappendedCdrCount(), 0);
    assert.equal(await deliveries.receiveCdr(stranded), 'duplicate', 'a late retry by the CPO appends nothing');
    const [event] = await cdrEvents(1);
    const expected = cdrPostedEvent(stranded, stranded.document, stranded.contentHash, { source: 'ingress' });
    assert.equal(event?.key, 'NL/CPO/LOST-1');
    assert.equal(event?.ceId, expected.id, 'the same ce_id as the ingress append that may have landed');
    assert.equal(event?.to, 'DE/EMS');
    assert.equal(await appendUnappendedCdrs({ deliveries, eventLog: stack.eventLog, logger }, 0), 0, 'nothing twice');
  });
});
