// The prober's safety net for CDRs received but never put on Kafka (the ingress's append failed and
// the CPO did not post again), on real Kafka and Postgres.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createHash } from 'node:crypto';
import { topics } from '@hub/events';
import { Counter, createLogger, Registry } from '@hub/observability';
import { cdrPostedEvent } from '@hub/modules';
import { postgresDeliveryStore } from '@hub/store';
import type { DeliveryStore } from '@hub/core';
import { givenTestStack } from '@hub/testing';
import { appendUnappendedCdrs } from '../src/cdr-relay.ts';

const logger = createLogger({ service: 'test', level: 'error' });
const SOURCE = 'urn:ocpi:NL:HUB';

function received(id: string) {
  const document = { country_code: 'NL', party_id: 'CPO', id, cdr_token: { country_code: 'DE', party_id: 'EMS', uid: 'T1', type: 'RFID', contract_id: 'C1' }, total_cost: { excl_vat: 1 } };
  return { countryCode: 'NL', partyId: 'CPO', id, contentHash: createHash('sha256').update(id).digest('hex'), document };
}

describe('prober: CDRs received but not on Kafka', () => {
  const given = givenTestStack('cdr_relay');

  const cdrEvents = async (count: number) => {
    const { records } = await given.stack.eventLog.readTopics([topics.cdrs], { until: (rs) => rs.length >= count, timeoutMs: 10_000 });
    const events: Array<{ key: string; ceId: string; to: string; source: string }> = records.map((r) => ({
      key: r.key?.toString() ?? '',
      ceId: String(r.headers['ce_id']),
      to: String(r.headers['ocpi-to']),
      source: String(r.headers['ce_source']),
    }));
    return events;
  };

  it('appends a stranded CDR once it is old enough, with the ce_id the ingress would have given it, and marks it appended', async () => {
    const { stack } = given;
    const deliveries: DeliveryStore = postgresDeliveryStore(stack.pool);
    const stranded = received('LOST-1');
    assert.equal(await deliveries.receiveCdr(stranded), 'new'); // stored; the append then "failed"
    assert.equal(await appendUnappendedCdrs({ deliveries, eventLog: stack.eventLog, logger, source: SOURCE }, 3600), 0, 'too recent: the CPO may still retry');
    assert.equal(await deliveries.unappendedCdrCount(), 1);

    assert.equal(await appendUnappendedCdrs({ deliveries, eventLog: stack.eventLog, logger, source: SOURCE }, 0), 1);
    assert.equal(await deliveries.unappendedCdrCount(), 0);
    assert.equal(await deliveries.receiveCdr(stranded), 'duplicate', 'a late retry by the CPO appends nothing');
    const [event] = await cdrEvents(1);
    const expected = cdrPostedEvent(stranded, stranded.document, stranded.contentHash, { source: SOURCE });
    assert.equal(event?.key, 'NL/CPO/LOST-1');
    assert.equal(event?.ceId, expected.id, 'the same ce_id as the ingress append that may have landed');
    assert.equal(event?.to, 'DE/EMS');
    assert.equal(event?.source, SOURCE, "the hub's URI, as the ingress gives it");
    assert.equal(await appendUnappendedCdrs({ deliveries, eventLog: stack.eventLog, logger, source: SOURCE }, 0), 0, 'nothing twice');
  });

  it('finds a CDR whose append landed unacknowledged and does not append it again: each CDR once in the stream', async () => {
    const { stack } = given;
    const deliveries: DeliveryStore = postgresDeliveryStore(stack.pool);
    const reappends = new Counter({ name: 'hub_cdr_reappends_total', help: 'test', labelNames: ['outcome'], registers: [new Registry()] });
    const landed = received('LANDED-1');
    const stranded = received('LOST-2');
    assert.equal(await deliveries.receiveCdr(landed), 'new');
    assert.equal(await deliveries.receiveCdr(stranded), 'new');
    // The ingress's append of LANDED-1 reached Kafka, its answer did not (a timeout, a broker killed
    // before it answered): the receipt stays pending.
    await stack.eventLog.append(topics.cdrs, [cdrPostedEvent(landed, landed.document, landed.contentHash, { source: SOURCE })]);

    assert.equal(await appendUnappendedCdrs({ deliveries, eventLog: stack.eventLog, logger, source: SOURCE, reappends }, 0), 2);
    assert.equal(await deliveries.unappendedCdrCount(), 0);
    const events = await cdrEvents(4);
    const perCeId = new Map<string, number>();
    for (const e of events) perCeId.set(e.ceId, (perCeId.get(e.ceId) ?? 0) + 1);
    assert.deepEqual([...perCeId.values()], [1, 1, 1], `each CDR once in ocpi.cdrs.v1 (LOST-1, LANDED-1, LOST-2): ${JSON.stringify([...perCeId])}`);
    const counted = (await reappends.get()).values.map((v) => `${String(v.labels.outcome)}=${v.value}`).sort();
    assert.deepEqual(counted, ['already_present=1', 'appended=1']);
  });

  it('takes a stranded CDR once: a second relay (another prober, an ingress retry) within the settle window gets nothing', async () => {
    const { stack } = given;
    const deliveries: DeliveryStore = postgresDeliveryStore(stack.pool);
    const stranded = received('LOST-3');
    assert.equal(await deliveries.receiveCdr(stranded), 'new');
    assert.equal(await deliveries.claimCdrAppend(stranded, 3600), undefined, 'its first append began just now: not settled');
    const taken = await deliveries.unappendedCdrs(0, 10);
    assert.deepEqual(taken.map((c) => c.id), ['LOST-3']);
    assert.deepEqual(await deliveries.unappendedCdrs(5, 10), [], 'taken by the first: not again within the window');
    assert.equal(await deliveries.claimCdrAppend(stranded, 5), undefined);
    assert.ok(await deliveries.claimCdrAppend(stranded, 0), 'after the window it can be taken again');
  });
});
