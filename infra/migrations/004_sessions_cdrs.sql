-- CDRs as received, for de-duplication and the owning CPO's GET. A row is written 'pending' before the
-- event is appended and marked 'appended' after Kafka acknowledged it: a CPO retry of a CDR whose
-- append failed appends it again instead of being told "already have it" (no CDR is ever lost).
create table cdrs (
  country_code text not null,
  party_id text not null,
  id text not null,
  content_hash text not null,
  document jsonb not null,
  state text not null check (state in ('pending', 'appended')),
  created_at timestamptz not null default now(),
  appended_at timestamptz,
  primary key (country_code, party_id, id)
);

-- Durable delivery records (reference design, Delivery rules): the dispatcher turns every session and
-- CDR event into one row per receiving eMSP and object before it commits the Kafka offset; delivery
-- workers deliver rows with retries and backoff. One row per session: a newer state replaces an
-- older one not yet delivered, so the eMSP never receives an older state after a newer one.
create table deliveries (
  id bigserial primary key,
  kind text not null check (kind in ('session', 'cdr')),
  emsp_country_code text not null,
  emsp_party_id text not null,
  cpo_country_code text not null,
  cpo_party_id text not null,
  object_id text not null,
  source_partition integer not null,
  source_offset bigint not null,
  payload jsonb not null,
  correlation_id text,
  event_time timestamptz not null,
  state text not null check (state in ('pending', 'delivered', 'dead', 'unroutable')),
  reason text,
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  claimed_until timestamptz,
  delivered_offset bigint,
  last_error text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  delivered_at timestamptz
);
create unique index deliveries_object on deliveries (kind, emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id, object_id);
create index deliveries_due on deliveries (next_attempt_at, id) where state = 'pending';
create index deliveries_state on deliveries (state, emsp_country_code, emsp_party_id) where state <> 'delivered';
