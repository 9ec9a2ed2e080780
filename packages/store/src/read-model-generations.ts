import { projectionOf } from '@hub/modules';
import { inTransaction, type Pool } from './pg-pool.ts';
import type { ReadModelStore } from '@hub/core';

// A read model's generations (postgres-read-model-store.ts): a rebuild fills a new one next to the
// active one, the switch-over makes it active once it caught up, and maintenance drops the old rows.

export function readModelGenerations(pool: Pool): Pick<ReadModelStore, 'beginRebuild' | 'switchOver' | 'maintain' | 'analyze' | 'counts'> {
  return {
    beginRebuild(model) {
      return inTransaction(pool, async (client) => {
        const { rows } = await client.query<{ active: number }>('select active from read_model_generations where model = $1 for update', [model]);
        const active = rows[0]?.active ?? 1;
        const building = active + 1;
        // Leftovers of an aborted rebuild of the same generation start from scratch.
        await client.query(`delete from ${projectionOf(model).table} where generation = $1`, [building]);
        await client.query('delete from projection_offsets where model = $1 and generation = $2', [model, building]);
        await client.query('delete from projection_rejects where model = $1 and generation = $2', [model, building]);
        await client.query('update read_model_generations set building = $2 where model = $1', [model, building]);
        return { active, building };
      });
    },

    switchOver(model, building, options = {}) {
      return inTransaction(pool, async (client) => {
        // Exclusive: waits for the projector's batches in flight, holds off new ones until commit.
        const { rows } = await client.query<{ active: number }>('select active from read_model_generations where model = $1 for update', [model]);
        const active = rows[0]?.active ?? 1;
        const positions = async (gen: number) =>
          new Map(
            (
              await client.query<{ partition: number; next_offset: string }>(
                'select partition, next_offset from projection_offsets where model = $1 and generation = $2',
                [model, gen],
              )
            ).rows.map((r) => [r.partition, BigInt(r.next_offset)]),
          );
        const live = await positions(active);
        const rebuilt = await positions(building);
        // Forced (hubctl positions reset): the live positions belong to another topic and say nothing.
        if (!options.force && ![...live].every(([p, offset]) => (rebuilt.get(p) ?? 0n) >= offset)) return false;
        await client.query('update read_model_generations set active = $2, building = null where model = $1', [model, building]);
        await client.query('delete from projection_offsets where model = $1 and generation < $2', [model, building]);
        return true;
      });
    },

    async maintain(model) {
      await pool.query(`delete from ${projectionOf(model).table} where generation < (select active from read_model_generations where model = $1)`, [model]);
      await pool.query(`vacuum (analyze) ${projectionOf(model).table}`);
    },

    async analyze(model) {
      await pool.query(`analyze ${projectionOf(model).table}`);
    },

    async counts(model, generation) {
      const { rows } = await pool.query<{ n: string }>(`select count(*) as n from ${projectionOf(model).table} where generation = $1`, [generation]);
      return Number(rows[0]?.n ?? 0);
    },
  };
}
