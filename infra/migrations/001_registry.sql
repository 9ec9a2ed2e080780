-- Registry: platforms (one partner connection), their parties (cc/pid/role), credentials tokens
-- (hashes only), the partner's endpoints, operator overrides, routing rules, health, audit outbox.

create table platforms (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  versions_url text,
  version text,
  -- the partner's own token, AES-256-GCM sealed with HUB_SECRET_KEY (the hub must send it back)
  partner_token_sealed bytea,
  business_details jsonb,
  registered_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table parties (
  country_code text not null check (country_code ~ '^[A-Z]{2}$'),
  party_id text not null check (party_id ~ '^[A-Z0-9]{3}$'),
  role text not null check (role in ('CPO', 'EMSP')),
  platform_id uuid not null references platforms (id),
  name text not null,
  suspended_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (country_code, party_id, role)
);
create index parties_platform on parties (platform_id);

create table credentials_tokens (
  token_hash text primary key,
  platform_id uuid not null references platforms (id),
  kind text not null check (kind in ('INITIAL', 'HUB')),
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
create index credentials_tokens_live on credentials_tokens (platform_id) where revoked_at is null;

create table partner_endpoints (
  platform_id uuid not null references platforms (id) on delete cascade,
  identifier text not null,
  role text not null check (role in ('SENDER', 'RECEIVER')),
  url text not null,
  primary key (platform_id, identifier, role)
);

-- Receiver URLs set by the account team (interface document, Onboarding (c)); they win over the
-- partner's own endpoints for deliveries to that party.
create table endpoint_overrides (
  country_code text not null,
  party_id text not null,
  role text not null,
  module text not null,
  url text not null,
  updated_at timestamptz not null default now(),
  primary key (country_code, party_id, role, module),
  foreign key (country_code, party_id, role) references parties (country_code, party_id, role)
);

create table routing_rules (
  emsp_country_code text not null,
  emsp_party_id text not null,
  cpo_country_code text not null,
  cpo_party_id text not null,
  enabled boolean not null,
  updated_at timestamptz not null default now(),
  primary key (emsp_country_code, emsp_party_id, cpo_country_code, cpo_party_id)
);
create index routing_rules_cpo on routing_rules (cpo_country_code, cpo_party_id) where enabled;

create table platform_health (
  platform_id uuid primary key references platforms (id),
  status text not null check (status in ('CONNECTED', 'OFFLINE')),
  last_probe_at timestamptz not null,
  last_error text,
  changed_at timestamptz not null
);

-- Transactional outbox: audit events are written with the change they record and published to Kafka
-- in id order by whoever holds the drain lock, so Postgres and the registry topic never disagree.
create table registry_outbox (
  id bigserial primary key,
  topic text not null,
  event jsonb not null,
  created_at timestamptz not null default now(),
  published_at timestamptz
);
create index registry_outbox_pending on registry_outbox (id) where published_at is null;
