-- Commands: one row per command the hub forwarded, under an unguessable id (the CPO calls
-- back to /commands/callback/{id} without authentication, so the id is the only credential).
create table commands (
  id uuid primary key,
  command text not null check (command in ('START_SESSION', 'STOP_SESSION', 'RESERVE_NOW', 'CANCEL_RESERVATION')),
  emsp_country_code text not null,
  emsp_party_id text not null,
  cpo_country_code text not null,
  cpo_party_id text not null,
  response_url text not null,
  reservation_id text,
  state text not null check (state in ('requested', 'accepted', 'rejected', 'result', 'timed_out')),
  deadline timestamptz,
  result jsonb,
  late_result jsonb,
  correlation_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index commands_deadline on commands (deadline) where state = 'accepted';
create index commands_reservation on commands (emsp_country_code, emsp_party_id, reservation_id) where reservation_id is not null;

-- Command results are delivered like sessions and CDRs (retries, dead letters), to the eMSP's
-- response_url kept on the record.
alter table deliveries drop constraint deliveries_kind_check;
alter table deliveries add constraint deliveries_kind_check check (kind in ('session', 'cdr', 'command_result'));
alter table deliveries add column target_url text;
