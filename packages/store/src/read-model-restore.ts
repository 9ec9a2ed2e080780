import { isProjectedModule, projectionOf, type ObjectPath } from '@hub/modules';
import { inTransaction, type Pool } from './pool.ts';
import type { Json, ReadModel } from './read-model-records.ts';

// Loads a generation from the snapshot topic (docs/decisions/0014-snapshot-topics.md): each record
// is the whole object as the live read model held it, so it is stored as it is, without the events
// that built it; the positions are the change topic's offsets the states reflect, where the tail
// replay of the change topic starts.

/** One snapshot record: the object's whole document and creation time, or null when it is gone. */
export interface RestoredObject {
  readonly path: ObjectPath;
  readonly document: Json | null;
  /** ISO 8601; the row's created_at (lists are ordered by it). */
  readonly createdAt: string;
}

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
