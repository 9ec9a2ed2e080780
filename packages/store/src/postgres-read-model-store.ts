import { isProjectedModule } from '@hub/modules';
import type { ReadModel, ReadModelStore } from '@hub/core';
import { pgPool, type Pool, type PoolClient } from './pg-pool.ts';
import type { Database } from './pool.ts';
import { applyBatches } from './read-model-apply.ts';
import { forEachLiveObjectChunk, restoreObjects } from './read-model-restore.ts';
import { readModelGenerations } from './read-model-generations.ts';
import { readModelLists, type ListOptions } from './read-model-list.ts';
import { readModelLookups } from './read-model-lookups.ts';
import { redriveRecord } from './read-model-redrive.ts';

export type { ListOptions } from './read-model-list.ts';

// Read models of locations and tariffs in Postgres (reference design, Postgres). The projector applies
// a batch of one partition in one transaction together with that partition's offset, so the rows and
// the position always agree: replaying a topic into an empty schema gives exactly the same rows.



async function generationOf(client: PoolClient | Pool, model: ReadModel): Promise<number> {
  const { rows } = await client.query<{ active: number }>('select active from read_model_generations where model = $1', [model]);
  return rows[0]?.active ?? 1;
}



/** `lists`: how list pages find their start (read-model-list.ts); the defaults are what the ingress runs. */
export function postgresReadModelStore(db: Database, lists: ListOptions = {}): ReadModelStore {
  const pool = pgPool(db);
  return {
    async applyBatch(model, partition, records, generation) {
      const [outcome] = await applyBatches(pool, model, [{ partition, records }], generation);
      return outcome ?? { applied: 0, skipped: records.length, rejected: 0, superseded: 0, quarantined: 0 };
    },

    applyBatches(model, batches, generation, onChanged) {
      return applyBatches(pool, model, batches, generation, onChanged);
    },

    restore: (model, generation, objects, positions) => restoreObjects(pool, model, generation, objects, positions),
    liveObjects: (model, chunkSize, write) => forEachLiveObjectChunk(pool, model, chunkSize, write),
    activeGeneration: (model) => generationOf(pool, model),

    async rejects(model, limit) {
      const { rows } = await pool.query<{ partition: number; offset: string; subject: string; event_type: string; reason: string; at: Date }>(
        `select partition, "offset", subject, event_type, reason, at from projection_rejects
          where model = $1 and generation = (select coalesce((select active from read_model_generations where model = $1), 1))
          order by at desc, partition, "offset" desc limit $2`,
        [model, limit],
      );
      return rows.map((r) => ({ partition: r.partition, offset: r.offset, subject: r.subject, type: r.event_type, reason: r.reason, at: r.at }));
    },

    redrive(model, record) {
      if (!isProjectedModule(model)) throw new Error(`unknown read model ${String(model)}`);
      return redriveRecord(db, model, record);
    },

    async positions(model, generation) {
      const gen = generation ?? (await generationOf(pool, model));
      const { rows } = await pool.query<{ partition: number; next_offset: string }>(
        'select partition, next_offset from projection_offsets where model = $1 and generation = $2',
        [model, gen],
      );
      return new Map(rows.map((r) => [r.partition, BigInt(r.next_offset)]));
    },

    listVisible: readModelLists(pool, lists),

    ...readModelLookups(pool),
    ...readModelGenerations(pool),
  };
}
