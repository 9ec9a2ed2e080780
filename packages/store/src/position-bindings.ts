import type { PositionBindingStore } from '@hub/core';
import { pgPool } from './pg-pool.ts';
import type { Database } from './pool.ts';

// Which topic a consumer group's stored positions belong to (migrations 015 and 031): the Postgres
// adapter of PositionBindingStore (@hub/core); the check itself is the event log's (position-check.ts).


const toJson = (m: ReadonlyMap<number, bigint>) => JSON.stringify(Object.fromEntries([...m].map(([p, o]) => [String(p), o.toString()])));
const fromJson = (j: Record<string, string>) => new Map(Object.entries(j).map(([p, o]) => [Number(p), BigInt(o)]));

export function postgresPositionBindings(db: Database): PositionBindingStore {
  const pool = pgPool(db);
  return {
    async load(consumerGroup, topic) {
      const { rows } = await pool.query<{ cluster_id: string; partitions: number; starts: Record<string, string>; ends: Record<string, string>; topic_id: string | null }>(
        'select cluster_id, partitions, starts, ends, topic_id from position_bindings where consumer_group = $1 and topic = $2',
        [consumerGroup, topic],
      );
      const r = rows[0];
      return r ? { clusterId: r.cluster_id, partitions: r.partitions, starts: fromJson(r.starts), ends: fromJson(r.ends), ...(r.topic_id === null ? {} : { topicId: r.topic_id }) } : undefined;
    },
    async save(consumerGroup, topic, binding) {
      await pool.query(
        `insert into position_bindings (consumer_group, topic, cluster_id, partitions, starts, ends, topic_id) values ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7)
         on conflict (consumer_group, topic) do update set cluster_id = excluded.cluster_id, partitions = excluded.partitions,
           starts = excluded.starts, ends = excluded.ends, topic_id = excluded.topic_id, bound_at = now()`,
        [consumerGroup, topic, binding.clusterId, binding.partitions, toJson(binding.starts), toJson(binding.ends), binding.topicId ?? null],
      );
    },
  };
}
