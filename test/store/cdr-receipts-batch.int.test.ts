// CDR receipts written in batches on real Postgres (group commit, group-commit.ts):
// CDRs posted while a statement runs share the next one, and each is still decided as if posted alone,
// one after the other (mod_cdrs.asciidoc: a CDR cannot be changed once sent; ids are CiStrings).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DependencyUnavailable, type CdrReceipts } from '@hub/core';
import { createPool, postgresCdrReceipts } from '@hub/store';
import { givenTestStack } from '@hub/testing';

const cdr = (id: string, hash = 'h1', document: Record<string, unknown> = { id, hash }) => ({ countryCode: 'NL', partyId: 'CPO', id, contentHash: hash, document });

describe('CDR receipts on Postgres: group commit', () => {
  const given = givenTestStack('cdr_receipts_batch');
  /** The transaction each CDR was received and marked in (now() is the transaction's start time). */
  const commits = async (ids: readonly string[]) =>
    (await given.stack.pool.query<{ id: string; created_at: Date; appended_at: Date | null; state: string; content_hash: string }>(
      'select id, created_at, appended_at, state, content_hash from cdrs where id = any($1::text[]) order by id',
      [ids],
    )).rows;

  it('receives CDRs posted during a statement in one commit, each decided as alone: repeats of one id in the batch (any case) are retries or conflicts', async () => {
    const receipts: CdrReceipts = postgresCdrReceipts(given.stack.pool);
    // The first post is written at once; the others arrive while it runs and share the next statement.
    const first = receipts.receiveCdr(cdr('B-FIRST'));
    const batch = await Promise.all([
      receipts.receiveCdr(cdr('B-1')),
      receipts.receiveCdr(cdr('b-1')), // the same CDR, id in another case, before its append: a retry
      receipts.receiveCdr(cdr('B-1', 'h2')), // another CDR under the same id
      receipts.receiveCdr(cdr('B-2')),
      receipts.receiveCdr(cdr('B-2')), // concurrent identical posts
      receipts.receiveCdr(cdr('B-3', 'h3')),
    ]);
    assert.equal(await first, 'new');
    assert.deepEqual(batch, ['new', 'retry-append', 'conflict', 'new', 'retry-append', 'new']);
    const rows = await commits(['B-FIRST', 'B-1', 'b-1', 'B-2', 'B-3']);
    assert.deepEqual(rows.map((r) => [r.id, r.content_hash, r.state]), [['B-1', 'h1', 'pending'], ['B-2', 'h1', 'pending'], ['B-3', 'h3', 'pending'], ['B-FIRST', 'h1', 'pending']]);
    // One commit for the batch (one transaction start time), another for the first post.
    const batched = new Set(rows.filter((r) => r.id !== 'B-FIRST').map((r) => r.created_at.getTime()));
    assert.equal(batched.size, 1);
  });

  it('decides posts of CDRs already held within a batch: appended is a duplicate, pending a retry, other content a conflict', async () => {
    const receipts = postgresCdrReceipts(given.stack.pool);
    assert.equal(await receipts.receiveCdr(cdr('H-APPENDED')), 'new');
    await receipts.markCdrAppended(cdr('H-APPENDED'));
    assert.equal(await receipts.receiveCdr(cdr('H-PENDING')), 'new');
    const first = receipts.receiveCdr(cdr('H-OTHER'));
    const batch = await Promise.all([
      receipts.receiveCdr(cdr('h-appended')),
      receipts.receiveCdr(cdr('H-PENDING')),
      receipts.receiveCdr(cdr('H-APPENDED', 'h2')),
      receipts.receiveCdr(cdr('h-pending', 'h2')),
    ]);
    await first;
    assert.deepEqual(batch, ['duplicate', 'retry-append', 'conflict', 'conflict']);
  });

  it('fails only the CDR Postgres refuses, not the others of its batch', async () => {
    const receipts = postgresCdrReceipts(given.stack.pool);
    const first = receipts.receiveCdr(cdr('F-FIRST'));
    // jsonb has no \u0000: Postgres refuses this document (22P05), whatever the schema let through.
    const results = await Promise.allSettled([receipts.receiveCdr(cdr('F-1')), receipts.receiveCdr(cdr('F-BAD', 'h1', { note: 'nul\u0000' })), receipts.receiveCdr(cdr('F-2'))]);
    await first;
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.deepEqual(results.map((r) => (r.status === 'fulfilled' ? r.value : undefined)), ['new', undefined, 'new']);
    assert.equal(((results[1] as PromiseRejectedResult).reason as { code?: string }).code, '22P05');
    assert.deepEqual((await commits(['F-1', 'F-BAD', 'F-2'])).map((r) => r.id), ['F-1', 'F-2']);
  });

  it('marks the CDRs appended during a statement in one commit, whatever the case of their ids', async () => {
    const receipts = postgresCdrReceipts(given.stack.pool);
    const ids = ['M-FIRST', 'M-1', 'M-2', 'M-3'];
    for (const id of ids) assert.equal(await receipts.receiveCdr(cdr(id)), 'new');
    const first = receipts.markCdrAppended(cdr('M-FIRST'));
    await Promise.all([receipts.markCdrAppended(cdr('M-1')), receipts.markCdrAppended(cdr('m-2')), receipts.markCdrAppended(cdr('M-3')), receipts.markCdrAppended(cdr('M-3'))]);
    await first;
    const rows = await commits(ids);
    assert.deepEqual(rows.map((r) => r.state), ['appended', 'appended', 'appended', 'appended']);
    assert.equal(new Set(rows.filter((r) => r.id !== 'M-FIRST').map((r) => r.appended_at?.getTime())).size, 1);
    assert.deepEqual(await receipts.findCdr(cdr('m-1')), { id: 'M-1', hash: 'h1' });
  });

  it('answers every post of a batch with DependencyUnavailable when Postgres cannot be reached (the ingress answers 503)', async () => {
    const url = new URL(given.stack.databaseUrl);
    url.port = '1'; // nothing listens there
    const away = createPool(url.toString(), { max: 2, onIdleError: () => undefined });
    try {
      const receipts = postgresCdrReceipts(away);
      const results = await Promise.allSettled([receipts.receiveCdr(cdr('D-1')), receipts.receiveCdr(cdr('D-2')), receipts.receiveCdr(cdr('D-3')), receipts.markCdrAppended(cdr('D-1')), receipts.markCdrAppended(cdr('D-2'))]);
      for (const r of results) assert.ok(r.status === 'rejected' && r.reason instanceof DependencyUnavailable, String(r.status === 'rejected' ? r.reason : r.status));
    } finally {
      await away.end();
    }
  });
});
