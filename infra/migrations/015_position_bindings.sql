-- Which Kafka topic a consumer's stored positions (projection_offsets, delivery_positions) were taken
-- from. kafkajs cannot read topic ids (Metadata v10), so a topic is identified by
-- its cluster id, partition count and the highest start and end offset seen of every partition: for
-- one topic on one cluster none of them ever goes backwards (event-log position-check.ts). A consumer
-- whose positions do not match refuses to start instead of skipping records; hubctl positions reset
-- rebuilds from the current topics and binds the positions anew.
create table position_bindings (
  consumer_group text not null,
  topic text not null,
  cluster_id text not null,
  partitions integer not null,
  -- {"<partition>": "<offset>"}
  starts jsonb not null,
  ends jsonb not null,
  bound_at timestamptz not null default now(),
  primary key (consumer_group, topic)
);
