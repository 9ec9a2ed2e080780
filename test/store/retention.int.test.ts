// Retention on real Postgres (src/retention.ts; docs/decisions/0006-retention.md): rows whose work is
// done are deleted once older than their retention, nothing that is still needed is (pending or dead
// deliveries, tokens and ClientInfo a recipient holds, commands waiting for a result, open quarantine),
// and a row another transaction holds is skipped, not waited for.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_RETENTION, pruneExpired } from '@hub/store';
import { createTestStack, type TestStack } from '@hub/testing';

const DAY = 86_400_000;

describe('retention on Postgres', () => {
  let stack: TestStack;
  before(async () => {
    stack = await createTestStack('retention');
  });
  after(async () => {
    await stack?.cleanup();
  });

  const delivery = async (kind: string, id: string, state: string, deliveredDaysAgo: number | null) => {
    await stack.pool.query(
      `insert into deliveries (kind, emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id, object_id, source_partition, source_offset, payload, event_time, state, delivered_at, recipient_role)
       values ($1, 'NL', 'EMS', 'BE', 'CPO', $2, 0, 0, '{}', now(), $3, case when $4::float8 is null then null else now() - $4::float8 * interval '1 day' end, case when $1 = 'token' then 'CPO' else 'EMSP' end)`,
      [kind, id, state, deliveredDaysAgo],
    );
  };
  const ids = async (sql: string) => (await stack.pool.query<{ id: string }>(sql)).rows.map((r) => r.id).sort();

  it('deletes done rows past their retention and keeps everything else', async () => {
    for (const kind of ['session', 'cdr', 'command_result', 'token', 'client_info']) {
      await delivery(kind, `${kind}-old`, 'delivered', 31);
      await delivery(kind, `${kind}-recent`, 'delivered', 29);
    }
    await delivery('session', 'pending-old', 'pending', null);
    await delivery('cdr', 'dead-old', 'dead', null);
    await stack.pool.query("update deliveries set created_at = now() - interval '60 days' where state <> 'delivered'");
    for (const [id, state, daysAgo] of [
      ['00000000-0000-0000-0000-000000000001', 'result', 31],
      ['00000000-0000-0000-0000-000000000002', 'timed_out', 31],
      ['00000000-0000-0000-0000-000000000003', 'accepted', 31],
      ['00000000-0000-0000-0000-000000000004', 'result', 1],
    ] as const) {
      await stack.pool.query(
        `insert into commands (id, command, emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id, response_url, state, updated_at)
         values ($1, 'START_SESSION', 'NL', 'EMS', 'BE', 'CPO', 'https://emsp.example.com/r', $2, now() - $3::int * interval '1 day')`,
        [id, state, daysAgo],
      );
    }
    for (const [offset, state, daysAgo] of [[1, 'discarded', 91], [2, 'redriven', 89], [3, 'quarantined', 200]] as const) {
      await stack.pool.query(
        `insert into consumer_quarantine (consumer_group, topic, partition, "offset", failure_kind, reason, state, resolved_at)
         values ('projector', 't', 0, $1, 'record', 'r', $2, case when $2 = 'quarantined' then null else now() - $3::int * interval '1 day' end)`,
        [offset, state, daysAgo],
      );
    }
    await stack.pool.query(
      `insert into projection_rejects (model, generation, partition, "offset", subject, event_type, reason, at)
       values ('locations', 1, 0, 1, 's', 't', 'superseded: x', now() - interval '31 days'), ('locations', 1, 0, 2, 's', 't', 'r', now())`,
    );
    await stack.pool.query(
      `insert into rate_limit_windows (scope, party, window_start, count) values ('x', 'NL/EMS', now() - interval '1 hour', 1), ('x', 'NL/EMS', date_trunc('minute', now()), 1)`,
    );

    const pruned = await pruneExpired(stack.pool, DEFAULT_RETENTION, { batchRows: 1 });
    assert.deepEqual(pruned, { deliveries: 3, commands: 2, consumer_quarantine: 1, projection_rejects: 1, rate_limit_windows: 1 });
    assert.deepEqual(await ids('select object_id as id from deliveries'), [
      'cdr-recent', 'client_info-old', 'client_info-recent', 'command_result-recent', 'dead-old', 'pending-old', 'session-recent', 'token-old', 'token-recent',
    ]);
    assert.deepEqual(await ids('select id::text as id from commands'), ['00000000-0000-0000-0000-000000000003', '00000000-0000-0000-0000-000000000004']);
    assert.deepEqual(await ids('select "offset"::text as id from consumer_quarantine'), ['2', '3']);
    assert.deepEqual(await ids('select "offset"::text as id from projection_rejects'), ['2']);
    assert.equal((await stack.pool.query('select 1 from rate_limit_windows')).rowCount, 1);
  });

  it('skips a row another transaction holds instead of waiting for it, and takes it at a later run', async () => {
    await delivery('cdr', 'held-old', 'delivered', 40);
    const holder = await stack.pool.connect();
    try {
      await holder.query('begin');
      await holder.query("select 1 from deliveries where object_id = 'held-old' for update");
      const pruned = await Promise.race([pruneExpired(stack.pool, DEFAULT_RETENTION), new Promise<'waited'>((r) => setTimeout(() => r('waited'), 5000))]);
      assert.notEqual(pruned, 'waited', 'pruning waited for a locked row');
      assert.deepEqual(await ids("select object_id as id from deliveries where object_id = 'held-old'"), ['held-old']);
      await holder.query('rollback');
    } finally {
      holder.release();
    }
    assert.equal((await pruneExpired(stack.pool, DEFAULT_RETENTION)).deliveries, 1);
  });

  it('a simulated clock decides what is old (the month bench makes time pass)', async () => {
    await stack.pool.query('delete from deliveries');
    await delivery('session', 'young', 'delivered', 0);
    assert.equal((await pruneExpired(stack.pool, DEFAULT_RETENTION, { now: new Date(Date.now() + 29 * DAY) })).deliveries, 0);
    assert.equal((await pruneExpired(stack.pool, DEFAULT_RETENTION, { now: new Date(Date.now() + 31 * DAY) })).deliveries, 1);
  });
});
