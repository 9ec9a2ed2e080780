-- Read models of locations and tariffs, projected from their topics. Rows carry a generation so a
-- rebuild can fill generation n+1 from the topic while generation n keeps serving; the switch is one
-- update of read_model_generations. Offsets per generation are stored with the rows they produced,
-- in the same transaction: a replay or a restart never applies an event twice or skips one.

create table read_model_generations (
  model text primary key check (model in ('locations', 'tariffs')),
  active integer not null,
  building integer
);
insert into read_model_generations (model, active) values ('locations', 1), ('tariffs', 1);

create table projection_offsets (
  model text not null,
  generation integer not null,
  partition integer not null,
  next_offset bigint not null,
  updated_at timestamptz not null default now(),
  primary key (model, generation, partition)
);

create table locations (
  generation integer not null,
  country_code text not null,
  party_id text not null,
  id text not null,
  last_updated timestamptz not null,
  document jsonb not null,
  primary key (generation, country_code, party_id, id)
);
-- Stable pages: ORDER BY last_updated, country_code, party_id, id, filtered by date_from/date_to.
create index locations_page on locations (generation, last_updated, country_code, party_id, id);

create table tariffs (
  generation integer not null,
  country_code text not null,
  party_id text not null,
  id text not null,
  last_updated timestamptz not null,
  document jsonb not null,
  primary key (generation, country_code, party_id, id)
);
create index tariffs_page on tariffs (generation, last_updated, country_code, party_id, id);

-- Events the projector could not apply (e.g. a PATCH of a location it never saw): kept, not lost.
create table projection_rejects (
  model text not null,
  generation integer not null,
  partition integer not null,
  "offset" bigint not null,
  subject text not null,
  event_type text not null,
  reason text not null,
  at timestamptz not null default now(),
  primary key (model, generation, partition, "offset")
);

-- Rate limits shared by every ingress replica: one row per party, scope and minute window.
create table rate_limit_windows (
  scope text not null,
  party text not null,
  window_start timestamptz not null,
  count integer not null,
  primary key (scope, party, window_start)
);
