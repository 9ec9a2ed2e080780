// hubctl status on a hub with 2,000 parties, written straight into Postgres: every
// section's counts are right (parties and health, routing rules, deliveries per eMSP, consumer lag
// from real Kafka heads minus stored positions, quarantined records, outbox pending). The time it
// takes is printed, not asserted.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newEvent, topics } from '@hub/events';
import { postgresDeliveryStore, postgresQuarantineStore, postgresReadModelStore, postgresRegistryStore } from '@hub/store';
import { givenTestStack } from '@hub/testing';
import { runHubctl } from '../src/cli.ts';
import type { HubStatus } from '../src/status.ts';

const PLATFORMS = 1_000; // each with a CPO and an eMSP party: 2,000 parties

describe('hubctl status', () => {
  const given = givenTestStack('hubctl_status');

  it('counts every section right on a hub with 2,000 parties', async () => {
    const { stack } = given;
    const q = (sql: string, params: unknown[] = []) => stack.pool.query(sql, params);
    // Platform i has CPO and eMSP parties "C<i>"/"E<i>" in country NL (party ids of 3 characters, base 36).
    await q(`insert into platforms (id, name) select ('00000000-0000-0000-0000-' || lpad(to_hex(i), 12, '0'))::uuid, 'platform ' || i from generate_series(1, ${PLATFORMS}) i`);
    const party = (letter: string) => `'${letter}' || substr('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ', i / 36 % 36 + 1, 1) || substr('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ', i % 36 + 1, 1)`;
    const platform = `('00000000-0000-0000-0000-' || lpad(to_hex(i), 12, '0'))::uuid`;
    await q(`insert into parties (country_code, party_id, role, platform_id, name, suspended_at)
             select 'NL', ${party('C')}, 'CPO', ${platform}, 'cpo ' || i, case when i <= 7 then now() end from generate_series(1, ${PLATFORMS}) i
             union all
             select 'NL', ${party('E')}, 'EMSP', ${platform}, 'emsp ' || i, null from generate_series(1, ${PLATFORMS}) i`);
    // Health: platforms 1..600 CONNECTED, 601..850 OFFLINE, the rest never probed (unknown).
    await q(`insert into platform_health (platform_id, status, last_probe_at, changed_at)
             select ${platform}, case when i <= 600 then 'CONNECTED' else 'OFFLINE' end, now(), now() from generate_series(1, 850) i`);
    // Routing: eMSP i with CPO i (1,000 rules, 10 of them disabled), and eMSP 1 also with CPOs 2..5.
    await q(`insert into routing_rules (emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id, enabled)
             select 'NL', ${party('E')}, 'NL', ${party('C')}, i > 10 from generate_series(1, ${PLATFORMS}) i`);
    await q(`insert into routing_rules (emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id, enabled)
             select 'NL', 'E01', 'NL', ${party('C')}, true from generate_series(2, 5) i`);
    // Deliveries: eMSP E01 3 pending, 2 dead, 1 delivered; E02 1 unroutable.
    const delivery = (emsp: string, id: string, state: string) =>
      q(`insert into deliveries (kind, emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id, object_id, source_partition, source_offset, payload, event_time, state)
         values ('session', 'NL', $1, 'NL', 'C01', $2, 0, 0, '{}', now(), $3)`, [emsp, id, state]);
    for (const [emsp, id, state] of [['E01', 'P1', 'pending'], ['E01', 'P2', 'pending'], ['E01', 'P3', 'pending'], ['E01', 'D1', 'dead'], ['E01', 'D2', 'dead'], ['E01', 'OK', 'delivered'], ['E02', 'U1', 'unroutable']]) {
      await delivery(emsp ?? '', id ?? '', state ?? '');
    }
    // Quarantine: 2 open records of the projector, 1 discarded one.
    for (const [offset, state] of [[1, 'quarantined'], [2, 'quarantined'], [3, 'discarded']] as const) {
      await q(`insert into consumer_quarantine (consumer_group, topic, partition, "offset", failure_kind, reason, state) values ('projector', $1, 0, $2, 'record', 'test', $3)`, [stack.eventLog.physical(topics.locations), offset, state]);
    }
    // Outbox: 3 pending, 1 published.
    await q(`insert into registry_outbox (topic, event, published_at) values ('t', '{}', null), ('t', '{}', null), ('t', '{}', null), ('t', '{}', now())`);
    // Consumer lag: 5 locations under one key (one partition); the projector stored position 2 there.
    await stack.eventLog.append(topics.locations, Array.from({ length: 5 }, (_, i) => newEvent({ type: 'ocpi.locations.location-put.v1', source: 'test', subject: `NL/C01/L${i}`, key: 'NL/C01/L', data: {} })));
    const heads = await stack.eventLog.latestOffsets(topics.locations);
    const partition = [...heads].find(([, end]) => end === 5n)?.[0];
    assert.notEqual(partition, undefined);
    await q(`insert into projection_offsets (model, generation, partition, next_offset) values ('locations', 1, $1, 2), ('locations', 2, $1, 5)`, [partition]);
    await q(`insert into delivery_positions (consumer_group, topic, partition, next_offset) values ('dispatcher', $1, 0, 0)`, [stack.eventLog.physical(topics.sessions)]);

    let out = '';
    const deps = {
      store: postgresRegistryStore(stack.pool),
      source: 'test',
      actor: 'test',
      readModels: () => ({ store: postgresReadModelStore(stack.pool), eventLog: stack.eventLog }),
      deliveries: () => ({ deliveries: postgresDeliveryStore(stack.pool), eventLog: stack.eventLog }),
      quarantine: () => postgresQuarantineStore(stack.pool),
      status: () => ({ pool: stack.pool, eventLog: stack.eventLog }),
      interactive: false,
      publishAudit: () => Promise.resolve(true),
      out: (t: string) => void (out += t),
      err: (t: string) => void (out += t),
    };
    const started = performance.now();
    assert.equal(await runHubctl(['status', '--json'], deps), 0, out);
    process.stdout.write(`# hubctl status --json with ${PLATFORMS * 2} parties: ${(performance.now() - started).toFixed(0)} ms\n`);
    const status = JSON.parse(out) as HubStatus;

    assert.deepEqual(status.totals, { parties: 2_000, cpo: 1_000, emsp: 1_000, suspended: 7, connected: 1_200, offline: 500, unknown: 300, routing_rules: 994 });
    const e01 = status.parties.find((p) => p.party_id === 'E01' && p.role === 'EMSP');
    assert.deepEqual({ ...e01, last_probe_at: typeof e01?.last_probe_at }, { country_code: 'NL', party_id: 'E01', role: 'EMSP', name: 'emsp 1', status: 'active', health: 'CONNECTED', last_probe_at: 'string', routing_rules: 4, check: null, last_check_at: null, check_failure: null, versions: ['2.2.1'], version: null });
    const c01 = status.parties.find((p) => p.party_id === 'C01' && p.role === 'CPO');
    assert.equal(c01?.status, 'suspended');
    assert.equal(c01?.routing_rules, 0); // its one rule (with E01) is disabled
    assert.equal(status.parties.find((p) => p.party_id === 'C02')?.routing_rules, 1); // E01 only: E02 and C02's rule is disabled
    assert.equal(status.parties.find((p) => p.party_id === 'EZZ' || p.party_id === 'ERS')?.health, 'unknown');
    assert.deepEqual(status.deliveries, [{ emsp: 'NL/E01', pending: 3, dead: 2, unroutable: 0 }, { emsp: 'NL/E02', pending: 0, dead: 0, unroutable: 1 }]);
    assert.deepEqual(status.quarantined, [{ group: 'projector', topic: topics.locations, records: 2 }]);
    assert.equal(status.outbox_pending, 3);
    const lag = (group: string, topic: string) => status.consumer_lag.find((l) => l.group === group && l.topic === topic)?.lag;
    assert.equal(lag('projector', topics.locations), 3); // generation 1 is the active one
    assert.equal(lag('projector', topics.tariffs), 0);
    assert.equal(lag('dispatcher', topics.sessions), 0);

    out = '';
    const startedHuman = performance.now();
    assert.equal(await runHubctl(['status'], deps), 0, out);
    process.stdout.write(`# hubctl status with ${PLATFORMS * 2} parties: ${(performance.now() - startedHuman).toFixed(0)} ms\n${out}`);
    assert.match(out, /^parties: 2000 \(1000 CPO, 1000 eMSP; 7 suspended\) health: 1200 CONNECTED, 500 OFFLINE, 300 unknown; routing rules: 994 enabled$/m);
    assert.match(out, /^ {2}NL\/E01 +3 +2 +0$/m);
    assert.match(out, /^ {2}projector +ocpi\.locations\.v1 +3$/m);
    assert.match(out, /^registry outbox pending: 3$/m);
    assert.match(out, /^quarantined records: 2 of ocpi\.locations\.v1 \(group projector\)$/m);
    assert.match(out, /^ {2}NL\/C01 +CPO +suspended +CONNECTED +0 /m);
    assert.ok(out.split('\n').length < 60, 'one screen');
  });
});
