import { isProjectedModule, parseSubject, projectionOf } from '@hub/modules';
import { creationTime, type ApplyOutcome, type Json, type ObjectChange, type ObjectPath, type ObjectsChanged, type PartitionBatch, type ProjectedRecord, type QuarantineEntry, type ReadModel } from '@hub/core';
import { quarantineInsertSql, quarantineParam } from './consumer-quarantine.ts';
import type { Pool, PoolClient } from './pg-pool.ts';
import { prepared } from './prepared.ts';

// The projector's hot path (postgres-read-model-store.ts applyBatch/applyBatches): plan (positions and
// the stored objects the batches build on), apply (the events, in memory), write (rows, rejects,
// quarantined records, positions, commit). Its statements and round trips are those of the one
// function it was split from; the SIGKILL replay-equality e2e and the locations bench depend on them.

/** One partition's records and those past its stored position. */
interface Work {
  readonly partition: number;
  readonly records: readonly ProjectedRecord[];
  readonly fresh: readonly ProjectedRecord[];
}

/** What applying the fresh records did, to be written. */
interface Applied {
  readonly documents: Map<string, Json>;
  readonly changed: Set<string>;
  readonly createdAt: Map<string, string>;
  readonly deleted: Set<string>;
  /** Not applicable, or superseded (newest wins): kept in projection_rejects for the operator. */
  readonly rejects: Array<{ partition: number; offset: string; subject: string; type: string; reason: string }>;
  readonly quarantines: QuarantineEntry[];
  readonly outcomes: Map<number, ApplyOutcome>;
  /** Every key changed or deleted: its object path (as its last event named it) and partition. */
  readonly objects: Map<string, { path: ObjectPath; partition: number }>;
}

// Ids are CiStrings (types.asciidoc): rows are keyed by the upper-cased id (migration 009), the
// document keeps the id as the CPO sent it.
const keyOf = (p: ObjectPath) => `${p.countryCode}\u0000${p.partyId}\u0000${p.id.toUpperCase()}`;

/**
 * Each partition's position, created at 0 the first time and locked (the no-op update takes the row
 * lock, which serialises two projector instances that briefly share a partition during a rebalance).
 * Without an explicit generation, the active one is read under a share lock: a switch-over (which
 * takes that row exclusively) waits for batches in flight, and no batch applies to a generation that
 * is no longer active. Commits are synchronous: with an asynchronous one a Postgres crash could lose a
 * position the projector has already moved past in Kafka, and the next batch would then skip the lost
 * events for good.
 */
async function begin(client: PoolClient, model: ReadModel, ordered: readonly PartitionBatch[], generation: number | undefined): Promise<{ gen: number; work: Work[] }> {
  const generationSql = generation === undefined ? `coalesce((select active from read_model_generations where model = '${model}' for share), 1)` : String(generation);
  const begun = (await client.query(
    `begin;
       insert into projection_offsets (model, generation, partition, next_offset)
         select '${model}', g.generation, p.partition, 0
           from (select ${generationSql} as generation) g, unnest(array[${ordered.map((b) => b.partition).join(',')}]::int[]) with ordinality as p(partition, n)
          order by p.n
       on conflict (model, generation, partition) do update set next_offset = projection_offsets.next_offset
       returning partition, generation, next_offset`,
  )) as unknown as Array<{ rows: Array<{ partition: number; generation: number; next_offset: string }> }>;
  const positionRows = begun[1]?.rows ?? [];
  const gen = positionRows[0]?.generation ?? generation ?? 1;
  const positionOf = new Map(positionRows.map((r) => [r.partition, BigInt(r.next_offset)]));
  return { gen, work: ordered.map((b) => ({ partition: b.partition, records: b.records, fresh: b.records.filter((r) => BigInt(r.offset) >= (positionOf.get(b.partition) ?? 0n)) })) };
}

/**
 * Loads, in one query, what the batches' objects build on: the stored document of every object with
 * an event that merges into it, and only the last_updated of an object whose one event here replaces
 * it whole (newest wins needs its time, not its document: a rebuild's batches of PUTs read no
 * documents, and against a new generation find no rows).
 */
async function load(client: PoolClient, model: ReadModel, gen: number, work: readonly Work[], parsed: ReadonlyArray<ReadonlyArray<ObjectPath | undefined>>): Promise<Map<string, Json>> {
  const firstIsWhole = new Map<string, boolean>();
  const wholeDocument = new Set<string>();
  work.forEach((w, wi) => {
    w.fresh.forEach((record, i) => {
      const path = parsed[wi]?.[i];
      if (!path || record.quarantine) return;
      const key = keyOf(path);
      // A later event of the same object may merge into the stored document if the first is superseded.
      if (firstIsWhole.has(key)) wholeDocument.add(key);
      else firstIsWhole.set(key, projectionOf(model).replacesWholeObject(record.type));
    });
  });
  const documents = new Map<string, Json>();
  if (firstIsWhole.size === 0) return documents;
  const keys = [...firstIsWhole.keys()].map((k) => k.split('\u0000') as [string, string, string]);
  const loaded = await client.query<{ country_code: string; party_id: string; id: string; last_updated: Date; document: Json | null }>(
    prepared(
      `select t.country_code, t.party_id, t.id, t.last_updated, case when k.whole then t.document end as document
         from unnest($2::text[], $3::text[], $4::text[], $5::boolean[]) as k(cc, pid, id, whole)
         join ${projectionOf(model).table} t on t.generation = $1 and t.country_code = k.cc and t.party_id = k.pid and t.id = k.id`,
      [gen, keys.map((k) => k[0]), keys.map((k) => k[1]), keys.map((k) => k[2]), [...firstIsWhole].map(([k, whole]) => !whole || wholeDocument.has(k))],
    ),
  );
  // A replaced object's stand-in holds only its time: evolve reads no more of it for a PUT.
  for (const r of loaded.rows) documents.set(`${r.country_code}\u0000${r.party_id}\u0000${r.id}`, r.document ?? { last_updated: r.last_updated.toISOString() });
  return documents;
}

/**
 * Applies the fresh records in memory. An object's events are all in one partition (the key decides
 * it), so applying partition after partition keeps every object's order.
 */
function apply(model: ReadModel, work: readonly Work[], parsed: ReadonlyArray<ReadonlyArray<ObjectPath | undefined>>, documents: Map<string, Json>): Applied {
  const changed = new Set<string>();
  // When an object was created, for the rows this batch inserts (an update keeps the stored one):
  // the time of its first applied event here, so a replay lists objects in the same order.
  const createdAt = new Map<string, string>();
  // Every key deleted at some point of the batch. Its row is deleted before the upserts, so an
  // object deleted and created again here is inserted afresh, with the time of its new creation:
  // the same row whichever way the events are cut into batches (live, or a replay).
  const deleted = new Set<string>();
  const rejects: Applied['rejects'] = [];
  const quarantines: QuarantineEntry[] = [];
  const outcomes = new Map<number, ApplyOutcome>();
  const objects = new Map<string, { path: ObjectPath; partition: number }>();
  work.forEach((w, wi) => {
    let rejected = 0;
    let superseded = 0;
    let quarantined = 0;
    w.fresh.forEach((record, i) => {
      if (record.quarantine) {
        quarantines.push(record.quarantine);
        quarantined++;
        return;
      }
      const path = parsed[wi]?.[i];
      const result = !path
        ? ({ kind: 'rejected', reason: `unreadable subject ${record.subject}` } as const)
        : projectionOf(model).evolve(documents.get(keyOf(path)), record.type, path, record.data);
      if ((result.kind === 'deleted' || result.kind === 'upsert') && path) {
        objects.set(keyOf(path), { path: { countryCode: path.countryCode, partyId: path.partyId, id: path.id }, partition: w.partition });
      }
      if (result.kind === 'deleted' && path) {
        // Gone from here on: a later event of this batch sees no stored object.
        documents.delete(keyOf(path));
        changed.delete(keyOf(path));
        createdAt.delete(keyOf(path));
        deleted.add(keyOf(path));
      } else if (result.kind === 'upsert' && path) {
        documents.set(keyOf(path), result.document);
        changed.add(keyOf(path));
        if (!createdAt.has(keyOf(path))) createdAt.set(keyOf(path), creationTime(record.time));
      } else if (result.kind === 'superseded') {
        superseded++;
        rejects.push({ partition: w.partition, offset: record.offset, subject: record.subject, type: record.type, reason: `superseded: ${result.reason}` });
      } else {
        rejected++;
        rejects.push({ partition: w.partition, offset: record.offset, subject: record.subject, type: record.type, reason: result.kind === 'rejected' ? result.reason : 'unknown' });
      }
    });
    outcomes.set(w.partition, { applied: w.fresh.length - rejected - superseded - quarantined, skipped: w.records.length - w.fresh.length, rejected, superseded, quarantined });
  });
  return { documents, changed, createdAt, deleted, rejects, quarantines, outcomes, objects };
}

/**
 * Writes what apply did, moves the positions and commits.
 * Long because: one transaction's statements in commit order (deletes, upserts, rejects, quarantines,
 * snapshot, positions); each is a short block.
 */
async function write(client: PoolClient, model: ReadModel, gen: number, work: readonly Work[], a: Applied, onChanged: ObjectsChanged | undefined): Promise<void> {
  const { table } = projectionOf(model);
  const createdOf = new Map<string, string>();
  if (a.deleted.size > 0) {
    const keys = [...a.deleted].map((k) => k.split('\u0000') as [string, string, string]);
    await client.query(
      `delete from ${table} t using unnest($2::text[], $3::text[], $4::text[]) as k(cc, pid, id)
          where t.generation = $1 and t.country_code = k.cc and t.party_id = k.pid and t.id = k.id`,
      [gen, keys.map((k) => k[0]), keys.map((k) => k[1]), keys.map((k) => k[2])],
    );
  }
  if (a.changed.size > 0) {
    // Keys travel as text arrays, the documents as one JSON array that Postgres splits without
    // parsing them into trees (json column, migration 007): text arrays would escape every
    // document twice, which made a rebuild's batches of thousands of locations three times slower.
    const cc: string[] = [];
    const pid: string[] = [];
    const id: string[] = [];
    const lastUpdated: unknown[] = [];
    const created: unknown[] = [];
    const docs: Json[] = [];
    for (const k of a.changed) {
      const [c, p, i] = k.split('\u0000') as [string, string, string];
      const doc = a.documents.get(k) as Json;
      cc.push(c);
      pid.push(p);
      id.push(i);
      lastUpdated.push(doc['last_updated']);
      created.push(a.createdAt.get(k) || doc['last_updated']);
      docs.push(doc);
    }
    const upserted = await client.query<{ country_code: string; party_id: string; id: string; created_at: Date }>(
      prepared(
        `insert into ${table} (generation, country_code, party_id, id, last_updated, created_at, document)
           select $1, k.cc, k.pid, k.id, k.lu::timestamptz, k.ca::timestamptz, d.doc
             from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) with ordinality as k(cc, pid, id, lu, ca, n)
             join json_array_elements($7::json) with ordinality as d(doc, n) using (n)
           on conflict (generation, country_code, party_id, id) do update set last_updated = excluded.last_updated, document = excluded.document
           ${onChanged ? 'returning country_code, party_id, id, created_at' : ''}`,
        [gen, cc, pid, id, lastUpdated, created, JSON.stringify(docs)],
      ),
    );
    if (onChanged) for (const r of upserted.rows) createdOf.set(`${r.country_code}\u0000${r.party_id}\u0000${r.id}`, r.created_at.toISOString());
  }
  if (a.rejects.length > 0) {
    await client.query(
      `insert into projection_rejects (model, generation, partition, "offset", subject, event_type, reason)
         select $1, $2, r.partition, r."offset", r.subject, r.type, r.reason
           from jsonb_to_recordset($3::jsonb) as r(partition int, "offset" bigint, subject text, type text, reason text)
         on conflict do nothing`,
      [model, gen, JSON.stringify(a.rejects)],
    );
  }
  if (a.quarantines.length > 0) await client.query(quarantineInsertSql(1), [quarantineParam(a.quarantines)]);
  // The new positions and the commit. (No NOTIFY: nothing listens, read-your-writes polls the
  // positions, and a NOTIFY would serialise every commit on Postgres's notification queue lock.)
  const moved = work.filter((w) => w.fresh.length > 0).map((w) => ({ partition: w.partition, next: BigInt((w.fresh[w.fresh.length - 1] as ProjectedRecord).offset) + 1n }));
  // The snapshot records are durable before the rows commit (docs/decisions/0014-snapshot-topics.md):
  // a crash in between leaves the snapshot a batch ahead, and applying that batch again writes the
  // same states; the other order would lose them for good.
  if (onChanged && a.objects.size > 0) {
    const nextOf = new Map(moved.map((m) => [m.partition, m.next]));
    const changes: ObjectChange[] = [...a.objects].map(([k, o]) => ({
      path: o.path,
      partition: o.partition,
      nextOffset: nextOf.get(o.partition) ?? 0n,
      document: a.changed.has(k) ? (a.documents.get(k) as Json) : null,
      createdAt: createdOf.get(k),
    }));
    await onChanged(changes);
  }
  await client.query(
    `update projection_offsets o set next_offset = v.next, updated_at = now()
         from (values ${moved.map((m) => `(${m.partition}, ${m.next.toString()}::bigint)`).join(', ')}) as v(partition, next)
        where o.model = '${model}' and o.generation = ${gen} and o.partition = v.partition;
       commit`,
  );
}

/**
 * Applies the batches of several partitions of one read model in one transaction of three round
 * trips: begin with the positions, the rows, then the new positions and commit. The
 * first and last are simple-protocol statement lists, which take no parameters: they carry only the
 * model name and integers, checked before they are inlined.
 */
export async function applyBatches(pool: Pool, model: ReadModel, batches: ReadonlyArray<PartitionBatch>, generation: number | undefined, onChanged?: ObjectsChanged): Promise<ApplyOutcome[]> {
  const partitions = batches.map((b) => b.partition);
  if (!isProjectedModule(model) || !partitions.every(Number.isInteger) || new Set(partitions).size !== partitions.length || (generation !== undefined && !Number.isInteger(generation))) {
    throw new Error(`bad batch coordinates ${model}/${partitions.join(',')}/${generation}`);
  }
  if (batches.length === 0) return [];
  // Rows are locked in partition order, so two instances sharing partitions during a rebalance
  // cannot deadlock each other.
  const ordered = [...batches].sort((x, y) => x.partition - y.partition);
  const client = await pool.connect();
  try {
    const { gen, work } = await begin(client, model, ordered, generation);
    if (work.every((w) => w.fresh.length === 0)) {
      await client.query('commit');
      return batches.map((b) => ({ applied: 0, skipped: b.records.length, rejected: 0, superseded: 0, quarantined: 0 }));
    }
    // Load what the batches build on, apply in memory, write back.
    const parsed = work.map((w) => w.fresh.map((r) => parseSubject(r.subject)));
    const applied = apply(model, work, parsed, await load(client, model, gen, work, parsed));
    await write(client, model, gen, work, applied, onChanged);
    return batches.map((b) => applied.outcomes.get(b.partition) ?? { applied: 0, skipped: b.records.length, rejected: 0, superseded: 0, quarantined: 0 });
  } catch (e) {
    await client.query('rollback').catch(() => undefined);
    throw e;
  } finally {
    client.release();
  }
}
