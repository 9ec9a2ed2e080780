-- Where the dispatcher stands in the sessions and CDRs topics, per partition, written in the same
-- statement as the delivery rows it made from them (as the projector keeps its positions with its
-- rows). Kafka's committed offset is then only a hint: after Postgres comes back from a failover to an
-- asynchronous standby, or a restore to an earlier point, the dispatcher resumes where the surviving
-- rows end, and the events of lost rows are read and enqueued again instead of being skipped.
create table delivery_positions (
  consumer_group text not null,
  topic text not null,
  partition integer not null,
  next_offset bigint not null,
  updated_at timestamptz not null default now(),
  primary key (consumer_group, topic, partition)
);
