import { isProjectedModule, projectionOf } from '@hub/modules';
import type { Json, LiveObjectsChunk, ObjectPath, ReadModel, RestoredObject } from '@hub/core';
import { inTransaction, type Pool, type PoolClient } from './pg-pool.ts';

// Loads a generation from the snapshot topic (docs/decisions/0014-snapshot-topics.md): each record
// is the whole object as the live read model held it, so it is stored as it is, without the events
// that built it; the positions are the change topic's offsets the states reflect, where the tail
// replay of the change topic starts.


const keyOf = (p: ObjectPath) => `${p.countryCode}\u0000${p.partyId}\u0000${p.id.toUpperCase()}`;

/**
 * Stores the objects (in order: a later record of a key replaces an earlier one) and moves the
 * generation's positions to at least `positions`, in one transaction.
 */
export async function restoreObjects(pool: Pool, model: ReadModel, generation: number, objects: readonly RestoredObject[], positions: ReadonlyMap<number, bigint>): Promise<void> {
  if (!isProjectedModule(model) || !Number.isInteger(generation)) throw new Error(`bad restore coordinates ${String(model)}/${generation}`);
  const { table } = projectionOf(model);
  const last = new Map<string, RestoredObject>();
  for (const o of objects) last.set(keyOf(o.path), o);
  const gone = [...last].filter(([, o]) => o.document === null).map(([k]) => k.split('\u0000') as [string, string, string]);
  const kept = [...last].filter(([, o]) => o.document !== null);
  await inTransaction(pool, async (client) => {
    if (gone.length > 0) {
      await client.query(
        `delete from ${table} t using unnest($2::text[], $3::text[], $4::text[]) as k(cc, pid, id)
          where t.generation = $1 and t.country_code = k.cc and t.party_id = k.pid and t.id = k.id`,
        [generation, gone.map((k) => k[0]), gone.map((k) => k[1]), gone.map((k) => k[2])],
      );
    }
    if (kept.length > 0) {
      const keys = kept.map(([k]) => k.split('\u0000') as [string, string, string]);
      const docs = kept.map(([, o]) => o.document as Json);
      await client.query(
        `insert into ${table} (generation, country_code, party_id, id, last_updated, created_at, document)
           select $1, k.cc, k.pid, k.id, k.lu::timestamptz, k.ca::timestamptz, d.doc
             from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) with ordinality as k(cc, pid, id, lu, ca, n)
             join json_array_elements($7::json) with ordinality as d(doc, n) using (n)
           on conflict (generation, country_code, party_id, id) do update
             set last_updated = excluded.last_updated, created_at = excluded.created_at, document = excluded.document`,
        [generation, keys.map((k) => k[0]), keys.map((k) => k[1]), keys.map((k) => k[2]), docs.map((d) => d['last_updated']), kept.map(([, o]) => o.createdAt), JSON.stringify(docs)],
      );
    }
    if (positions.size > 0) {
      const entries = [...positions];
      await client.query(
        `insert into projection_offsets (model, generation, partition, next_offset)
           select $1, $2, p.partition, p.next from unnest($3::int[], $4::bigint[]) as p(partition, next) order by p.partition
         on conflict (model, generation, partition) do update set next_offset = greatest(projection_offsets.next_offset, excluded.next_offset), updated_at = now()`,
        [model, generation, entries.map(([p]) => p), entries.map(([, n]) => n.toString())],
      );
    }
  });
}


type LiveRow = { country_code: string; party_id: string; id: string; document: Json; created_at: Date };

/**
 * Hands the active generation's objects to `write` in key order, `chunkSize` at a time, each inside a
 * transaction that holds the chunk's rows under a share lock until `write` returned, with the
 * positions read after the lock was taken (docs/decisions/0014-snapshot-topics.md, filling the
 * snapshot of a deployment that predates it). A projector changing one of those rows waits, so its
 * own snapshot record of the row comes after the one written here; every change the row reflects is
 * before the positions. Rows a projector transaction holds are skipped (never waited for, so the two
 * cannot deadlock) and taken one by one at the end, each waiting for that transaction alone.
 * Returns how many objects were written.
 */
export async function forEachLiveObjectChunk(pool: Pool, model: ReadModel, chunkSize: number, write: (chunk: LiveObjectsChunk) => Promise<void>): Promise<number> {
  if (!isProjectedModule(model) || !Number.isInteger(chunkSize) || chunkSize < 1) throw new Error(`bad snapshot coordinates ${String(model)}/${chunkSize}`);
  const rule = projectionOf(model);
  const generation = `coalesce((select active from read_model_generations where model = '${model}'), 1)`;
  const columns = 'country_code, party_id, id, document, created_at';
  let written = 0;
  const skipped: Array<[string, string, string]> = [];
  const writeLocked = async (client: PoolClient, rows: readonly LiveRow[]): Promise<void> => {
    const { rows: offsets } = await client.query<{ partition: number; next_offset: string }>(
      `select partition, next_offset from projection_offsets where model = $1 and generation = ${generation}`,
      [model],
    );
    const objects = rows.map((r) => {
      // The id as the partner sent it, when the document still names the row (an erased token's row
      // is named by its data key's id instead: docs/decisions/0013-erasure-by-destroying-data-keys.md).
      const sent = rule.objectId(r.document);
      const id = sent !== undefined && sent.toUpperCase() === r.id ? sent : r.id;
      return { path: { countryCode: r.country_code, partyId: r.party_id, id }, document: r.document, createdAt: r.created_at.toISOString() };
    });
    await write({ objects, positions: new Map(offsets.map((o) => [o.partition, BigInt(o.next_offset)])) });
    written += objects.length;
  };
  let after: [string, string, string] = ['', '', ''];
  for (;;) {
    const done = await inTransaction(pool, async (client) => {
      const { rows: keys } = await client.query<{ country_code: string; party_id: string; id: string }>(
        `select country_code, party_id, id from ${rule.table} where generation = ${generation} and (country_code, party_id, id) > ($1, $2, $3)
          order by country_code, party_id, id limit $4`,
        [...after, chunkSize],
      );
      const last = keys[keys.length - 1];
      if (!last) return true;
      after = [last.country_code, last.party_id, last.id];
      const { rows } = await client.query<LiveRow>(
        `select ${columns} from ${rule.table} where generation = ${generation} and (country_code, party_id, id) >= ($1, $2, $3) and (country_code, party_id, id) <= ($4, $5, $6)
          order by country_code, party_id, id for share skip locked`,
        [keys[0]!.country_code, keys[0]!.party_id, keys[0]!.id, last.country_code, last.party_id, last.id],
      );
      const locked = new Set(rows.map((r) => `${r.country_code}\u0000${r.party_id}\u0000${r.id}`));
      for (const k of keys) if (!locked.has(`${k.country_code}\u0000${k.party_id}\u0000${k.id}`)) skipped.push([k.country_code, k.party_id, k.id]);
      if (rows.length > 0) await writeLocked(client, rows);
      return keys.length < chunkSize;
    });
    if (done) break;
  }
  for (const [cc, pid, id] of skipped) {
    await inTransaction(pool, async (client) => {
      const { rows } = await client.query<LiveRow>(
        `select ${columns} from ${rule.table} where generation = ${generation} and country_code = $1 and party_id = $2 and id = $3 for share`,
        [cc, pid, id],
      );
      // Gone meanwhile: the projector that deleted it wrote its tombstone.
      if (rows.length > 0) await writeLocked(client, rows);
    });
  }
  return written;
}
