-- ChargingProfiles relayed between eMSPs and CPOs (mod_charging_profiles.asciidoc, Receiver interface):
-- one row per set (PUT), get (GET) or clear (DELETE) the hub forwarded, under an unguessable id (the
-- CPO posts the result to /chargingprofiles/callback/{id} without authentication, so the id is the only
-- credential), kept like a command (migration 006): the eMSP's response_url, the CPO's deadline, the
-- result and a result that came after the hub's own timeout answer.
create table charging_profile_requests (
  id uuid primary key,
  operation text not null check (operation in ('SET', 'GET', 'CLEAR')),
  session_id text not null,
  emsp_country_code text not null,
  emsp_party_id text not null,
  cpo_country_code text not null,
  cpo_party_id text not null,
  response_url text not null,
  state text not null check (state in ('requested', 'accepted', 'rejected', 'result', 'timed_out')),
  deadline timestamptz,
  result jsonb,
  late_result jsonb,
  correlation_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index charging_profile_requests_deadline on charging_profile_requests (deadline) where state = 'accepted';

-- Results go to the eMSP's response_url like command results; a CPO's ActiveChargingProfile update
-- goes to the session's eMSP, one row per session holding the newest (source_time: start_date_time).
alter table deliveries drop constraint deliveries_kind_check;
alter table deliveries add constraint deliveries_kind_check
  check (kind in ('session', 'cdr', 'command_result', 'token', 'client_info', 'charging_profile_result', 'active_charging_profile')) not valid;
alter table deliveries validate constraint deliveries_kind_check;
