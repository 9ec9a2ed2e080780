-- Records a consumer cannot apply: a data or constraint error that fails the same
-- way on every retry. Instead of looping on the record (and holding up every later record of its
-- partition), the consumer keeps it here, with its reason, and goes on; the row is written in the same
-- transaction as the consumer's position, so it is never both skipped and lost. One table for every
-- consumer group (projector, dispatcher, rebuild, replay). The record is kept byte-exact (key, value
-- and headers as Kafka had them) so an operator can re-drive it after a fix (hubctl quarantine).
create table consumer_quarantine (
  id bigserial primary key,
  consumer_group text not null,
  topic text not null,
  partition integer not null,
  "offset" bigint not null,
  record_key bytea,
  record_value bytea,
  -- Header name -> base64 of the value bytes (a header may hold anything).
  record_headers jsonb not null default '{}',
  ce_type text,
  ce_id text,
  failure_kind text not null check (failure_kind in ('record', 'undecodable')),
  -- Error class, SQLSTATE and message; never a token or a document.
  reason text not null,
  -- quarantined: waits for an operator; redrive: an operator asked for it to be applied again (the
  -- consumer does so and sets redriven, superseded or quarantined with the new reason); discarded:
  -- resolved without applying.
  state text not null default 'quarantined' check (state in ('quarantined', 'redrive', 'redriven', 'superseded', 'discarded')),
  attempts integer not null default 1,
  first_seen_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  resolved_at timestamptz,
  unique (consumer_group, topic, partition, "offset")
);

create index consumer_quarantine_open on consumer_quarantine (consumer_group, state) where state in ('quarantined', 'redrive');
